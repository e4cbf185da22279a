"""A worker in its own OS process, for the multi-process rows (contract P2, C4, crash recovery).

Part of the suite.

``python -m alkstore_contract.suite.worker '<json spec>'`` opens the engine named in
the spec on the given location and performs one action, writing one JSON
event a line on stdout, each flushed as soon as the op it reports returned:
the parent can kill the process at any moment and trust every line it read.

Actions:
- ``drain``: several stores x several tasks claim and ack until the queue is empty.
- ``hold``: claim up to ``n`` jobs, report them, then wait to be killed.
- ``churn``: one op at a time, a seeded random mix of enqueue, claim, ack, retry,
  fail and cancel, until killed (the durability row's kill -9 leg,
  ``rows/durability/kill.py``). Each op is announced by a ``begin`` line before it
  is awaited and reported by an ``end`` line after it returned, so the parent
  knows every op that took effect and the one op, at most, that was in flight when
  the process died. The ``end`` line carries the job as ``get_job`` showed it right
  after the op (``snapshot``; ``None`` once gone): the parent expects exactly that
  after a reopen, the engine's own account of what it committed, never a model
  of what the op should have done.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from datetime import datetime
from typing import Any

from alkstore_contract.clock import Clock, ManualClock
from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import JOB_FIELDS, Job, JobId, QueueOpts


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _clock(arg: str) -> Clock | None:
    """``system`` → the engine's own clock; an ISO instant → a manual clock standing still there."""
    return None if arg == "system" else ManualClock(datetime.fromisoformat(arg))


def snapshot(job: Job | None) -> dict[str, Any] | None:
    """``job`` as a churn line carries it: every field, instants in ISO form (``None`` for a job that is gone).

    The replay compares a reopened store's ``get_job`` in this same form, so
    two reads are equal exactly when every field is.
    """
    if job is None:
        return None
    fields = ((name, getattr(job, name)) for name in JOB_FIELDS)
    return {name: value.isoformat() if isinstance(value, datetime) else value for name, value in fields}


def _handout_event(handle: JobHandle, worker: str, claim: str) -> dict[str, Any]:
    job = handle.job
    return {
        "event": "handout",
        "job": job.id,
        "worker": worker,
        "claim": claim,
        "lease": job.lease_expires_at.isoformat() if job.lease_expires_at else None,
        "vt": job.visibility_timeout_s,
        "attempts": job.attempts,
    }


async def _drain_task(queue: Queue, worker: str, batch: int) -> None:
    sequence = 0
    while True:
        handles = await queue.claim_batch(worker, batch)
        if not handles:
            return
        for handle in handles:
            sequence += 1
            claim = f"{worker}#{sequence}"
            emit(_handout_event(handle, worker, claim))
            acked = await handle.ack()
            emit({"event": "release", "job": handle.job.id, "claim": claim, "op": "ack", "ok": acked})


async def drain(spec: dict[str, Any], stores: list[Store]) -> None:
    opts = QueueOpts(**spec.get("opts", {}))
    tasks = []
    for store_index, store in enumerate(stores):
        queue = store.queue(spec["queue"], opts)
        for task_index in range(int(spec.get("tasks_per_store", 1))):
            worker = f"{spec['worker_prefix']}s{store_index}t{task_index}"
            tasks.append(_drain_task(queue, worker, int(spec.get("batch", 1))))
    await asyncio.gather(*tasks)


async def hold(spec: dict[str, Any], stores: list[Store]) -> None:
    queue = stores[0].queue(spec["queue"], QueueOpts(**spec.get("opts", {})))
    worker = spec["worker_prefix"]
    for index, handle in enumerate(await queue.claim_batch(worker, int(spec["n"]))):
        emit(_handout_event(handle, worker, f"{worker}#{index + 1}"))
    emit({"event": "holding"})
    await asyncio.Event().wait()


CHURN_MAX_HELD = 16
"""Claims stop while this many handles are open, so the churn keeps finishing jobs."""
CHURN_RETRY_DELAYS_S = (0.0, 3600.0)
"""Retried jobs come back ready at once (claimable again) or far in the future."""
CHURN_OPS = ("enqueue", "claim", "ack", "retry", "fail", "cancel")
CHURN_WEIGHTS = (30, 25, 15, 12, 6, 8)


class Churn:
    """The ``churn`` action's state: the handles it holds and the ids it has seen."""

    def __init__(self, queue: Queue, worker: str, rng: random.Random) -> None:
        self.queue = queue
        self.worker = worker
        self.rng = rng
        self.held: list[JobHandle] = []
        self.known: list[JobId] = []

    def pick(self) -> str:
        """The next op: a handle op only while a handle is held, a claim only below the cap."""
        while True:
            op = self.rng.choices(CHURN_OPS, CHURN_WEIGHTS)[0]
            if op in ("ack", "retry", "fail") and not self.held:
                continue
            if op == "claim" and len(self.held) >= CHURN_MAX_HELD:
                continue
            if op == "cancel" and not self.known:
                continue
            return op

    async def step(self, seq: int) -> None:
        """Announce one op, await it, report what it returned and how the job reads right after it."""
        op = self.pick()
        if op == "enqueue":
            max_attempts = self.rng.choice((None, 1, 2))
            emit({"event": "begin", "seq": seq, "op": op})
            job_id = await self.queue.enqueue({"seq": seq}, max_attempts=max_attempts)
            self.known.append(job_id)
            await self._report({"seq": seq, "op": op, "job": job_id})
        elif op == "claim":
            emit({"event": "begin", "seq": seq, "op": op})
            handle = await self.queue.claim_one(self.worker)
            if handle is None:
                emit({"event": "end", "seq": seq, "op": op, "job": None})
                return
            self.held.append(handle)
            await self._report({"seq": seq, "op": op, "job": handle.job.id})
        elif op == "cancel":
            job_id = self.rng.choice(self.known)
            emit({"event": "begin", "seq": seq, "op": op, "job": job_id})
            await self._report({"seq": seq, "op": op, "job": job_id, "ok": await self.queue.cancel(job_id)})
        else:
            await self._release(seq, op, self.held.pop(self.rng.randrange(len(self.held))))

    async def _report(self, end: dict[str, Any]) -> None:
        """The ``end`` line of an op on one job, with the job as ``get_job`` shows it now."""
        emit({"event": "end", **end, "after": snapshot(await self.queue.get_job(end["job"]))})

    async def _release(self, seq: int, op: str, handle: JobHandle) -> None:
        job_id = handle.job.id
        error = self.rng.choice((None, f"{op} #{seq}"))
        delay = self.rng.choice(CHURN_RETRY_DELAYS_S)
        emit({"event": "begin", "seq": seq, "op": op, "job": job_id, "error": error, "delay": delay})
        if op == "ack":
            ok = await handle.ack()
        elif op == "retry":
            ok = await handle.retry(error=error, delay=delay)
        else:
            ok = await handle.fail(error=error)
        await self._report({"seq": seq, "op": op, "job": job_id, "ok": ok})


async def churn(spec: dict[str, Any], stores: list[Store]) -> None:
    """Random single ops until ``max_ops`` (a safety bound), then wait to be killed like ``hold``."""
    queue = stores[0].queue(spec["queue"], QueueOpts(**spec.get("opts", {})))
    state = Churn(queue, spec["worker_prefix"], random.Random(int(spec["churn_seed"])))
    emit({"event": "started"})
    for seq in range(1, int(spec.get("max_ops", 20_000)) + 1):
        await state.step(seq)
    emit({"event": "idle"})
    await asyncio.Event().wait()


ACTIONS = {"drain": drain, "hold": hold, "churn": churn}


async def main(spec: dict[str, Any]) -> None:
    adapter = load_adapter(spec["engine"])
    clock = _clock(spec.get("clock", "system"))
    stores = [
        await adapter.open_store(spec["location"], clock=clock, seed=int(spec.get("seed", 0)) + index)
        for index in range(int(spec.get("stores", 1)))
    ]
    try:
        await ACTIONS[spec["action"]](spec, stores)
    finally:
        for store in stores:
            await store.close()
    emit({"event": "done"})


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
