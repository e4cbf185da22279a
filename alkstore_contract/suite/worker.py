"""A worker in its own OS process, for the multi-process rows (contract P2, C4, crash recovery).

Part of the suite.

``python -m alkstore_contract.suite.worker '<json spec>'`` opens the engine named in
the spec on the given location and performs one action, writing one JSON
event a line on stdout, each flushed as soon as the op it reports returned:
the parent can kill the process at any moment and trust every line it read.

Actions:
- ``drain``: several stores x several tasks claim and ack until the queue is empty (with ``barrier``:
  the worker says ``ready`` once its stores are open and starts when a line arrives on its stdin; with
  ``count_left``, a task whose claim comes back empty reports how many jobs the oracle still counts).
- ``enqueue_unique``: for each key of ``keys``, waits for a line on stdin, then enqueues it from every
  store at once and reports each answer (row unique_keys, K3).
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
- ``burst``: a seeded mix of writes (enqueue, enqueue_many, claim, ack, retry,
  fail, heartbeat, cancel) with no read between them, each reported by a
  ``told`` line of what it returned, ending with a write of the kind the spec
  names; right after that write's line the worker kills (``then: kill``) or
  stops (``then: stop``) its whole process group, the engine's processes with
  it, before anything else runs (the durability row's ``at_ack`` leg). No
  ``get_job`` runs in between, so an engine that commits only when read, or a
  few milliseconds after it answered, loses what it acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, cast

from alkstore_contract.clock import Clock, ManualClock
from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import JobHandle, Queue, Store, UniqueQueue
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


async def _drain_task(queue: Queue, worker: str, batch: int, count_left: Callable[[], Awaitable[int]] | None) -> None:
    sequence = 0
    while True:
        handles = await queue.claim_batch(worker, batch)
        if not handles:
            if count_left is not None:
                emit({"event": "empty", "worker": worker, "stored": await count_left()})
            return
        for handle in handles:
            sequence += 1
            claim = f"{worker}#{sequence}"
            emit(_handout_event(handle, worker, claim))
            acked = await handle.ack()
            emit({"event": "release", "job": handle.job.id, "claim": claim, "op": "ack", "ok": acked})


async def drain(spec: dict[str, Any], stores: list[Store]) -> None:
    opts = QueueOpts(**spec.get("opts", {}))
    if spec.get("barrier"):
        # Stores open, nothing claimed yet: the parent says go to every worker at once, so they race.
        emit({"event": "ready"})
        await asyncio.to_thread(sys.stdin.readline)
    count_left = None
    if spec.get("count_left"):
        # The oracle's count of the jobs still stored, read as soon as a claim came back empty (row progress).
        adapter = load_adapter(spec["engine"])
        location = spec["location"]

        async def count_left() -> int:
            return await adapter.count_stored_jobs(location)

    tasks = []
    for store_index, store in enumerate(stores):
        queue = store.queue(spec["queue"], opts)
        for task_index in range(int(spec.get("tasks_per_store", 1))):
            worker = f"{spec['worker_prefix']}s{store_index}t{task_index}"
            tasks.append(_drain_task(queue, worker, int(spec.get("batch", 1)), count_left))
    await asyncio.gather(*tasks)


async def enqueue_unique(spec: dict[str, Any], stores: list[Store]) -> None:
    """Round by round, on the parent's word: every store enqueues the round's key at once (row unique_keys, K3).

    Each round waits for a line on stdin, so the parent starts every process's round together
    (``processes.unique_rounds``); each answer is reported, then ``round``.
    """
    queues = [cast(UniqueQueue, store.queue(spec["queue"])) for store in stores]
    for key in spec["keys"]:
        await asyncio.to_thread(sys.stdin.readline)
        answers = await asyncio.gather(*(queue.enqueue_unique({"pid": os.getpid()}, key) for queue in queues))
        for answer in answers:
            emit({"event": "enqueued", "key": key, "id": answer.id, "created": answer.created})
        emit({"event": "round", "key": key})


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


BURST_OPS = ("enqueue", "enqueue_many", "claim", "ack", "retry", "fail", "heartbeat", "cancel")
BURST_WEIGHTS = (20, 6, 25, 12, 10, 6, 12, 6)
BURST_HANDLE_OPS = ("ack", "retry", "fail", "heartbeat")
BURST_HEARTBEAT_FACTOR = 2
"""A burst's heartbeat extends the lease to twice the visibility timeout, so a lost one shows in the lease."""


class Burst:
    """The ``burst`` action's state: the handles it holds, the ids it may cancel, and its sequence numbers."""

    def __init__(self, queue: Queue, worker: str, rng: random.Random, vt: float) -> None:
        self.queue = queue
        self.worker = worker
        self.rng = rng
        self.vt = vt
        self.held: list[JobHandle] = []
        self.known: list[JobId] = []
        self.seq = 0

    def feasible(self, op: str) -> bool:
        if op in BURST_HANDLE_OPS:
            return bool(self.held)
        if op == "claim":
            return len(self.held) < CHURN_MAX_HELD
        return op != "cancel" or bool(self.known)

    def pick(self) -> str:
        while True:
            op = self.rng.choices(BURST_OPS, BURST_WEIGHTS)[0]
            if self.feasible(op):
                return op

    async def ready_for(self, op: str) -> None:
        """Make ``op`` possible: a claim (after an enqueue if need be) before a handle op, an enqueue before cancel."""
        while not self.feasible(op):
            await self.run("claim" if op in BURST_HANDLE_OPS and self.known else "enqueue")

    async def run(self, op: str) -> None:
        """Perform ``op`` and write its ``told`` line: what the engine answered, nothing read back."""
        self.seq += 1
        told: dict[str, Any] = {"event": "told", "seq": self.seq, "op": op}
        if op in ("enqueue", "enqueue_many"):
            payloads = [{"seq": self.seq, "i": i} for i in range(1 if op == "enqueue" else self.rng.randint(2, 4))]
            if op == "enqueue":
                ids = [await self.queue.enqueue(payloads[0], max_attempts=self.rng.choice((None, 1, 2)))]
            else:
                ids = list(await self.queue.enqueue_many(payloads))
            self.known.extend(ids)
            told["jobs"] = [{"id": job_id, "payload": payload} for job_id, payload in zip(ids, payloads, strict=True)]
        elif op == "claim":
            handle = await self.queue.claim_one(self.worker)
            if handle is not None:
                self.held.append(handle)
                if handle.job.id in self.known:
                    self.known.remove(handle.job.id)
                told["claimed"] = snapshot(handle.job)
        elif op == "cancel":
            job_id = self.known.pop(self.rng.randrange(len(self.known)))
            told.update(job=job_id, ok=await self.queue.cancel(job_id))
        else:
            handle = self.held.pop(self.rng.randrange(len(self.held)))
            told["job"] = handle.job.id
            if op == "ack":
                told["ok"] = await handle.ack()
            elif op == "retry":
                told["ok"] = await handle.retry(error=f"retry #{self.seq}", delay=self.rng.choice(CHURN_RETRY_DELAYS_S))
            elif op == "fail":
                told["ok"] = await handle.fail(error=f"fail #{self.seq}")
            else:
                told_extend = self.vt * BURST_HEARTBEAT_FACTOR
                told.update(extend=told_extend, ok=await handle.heartbeat(told_extend))
                self.held.append(handle)
        emit(told)


def end_group(then: str) -> None:
    """SIGKILL or SIGSTOP this worker's whole process group (it leads one: the parent started it so).

    One signal to the group reaches the worker and every engine process it
    started at once, so nothing of the engine runs after the last ``told``
    line: no timer, no background commit, no exit handler.
    """
    if os.getpgrp() != os.getpid():
        raise RuntimeError("the burst worker must lead its own process group (start_new_session)")
    os.killpg(os.getpgrp(), signal.SIGSTOP if then == "stop" else signal.SIGKILL)


async def burst(spec: dict[str, Any], stores: list[Store]) -> None:
    """``ops`` seeded writes, then one of kind ``last``; then the group is killed or stopped at once."""
    opts = QueueOpts(**spec.get("opts", {}))
    queue = stores[0].queue(spec["queue"], opts)
    vt = float(spec["opts"]["visibility_timeout_s"])
    state = Burst(queue, spec["worker_prefix"], random.Random(int(spec["churn_seed"])), vt)
    emit({"event": "started"})
    for _ in range(int(spec["ops"])):
        await state.run(state.pick())
    await state.ready_for(spec["last"])
    await state.run(spec["last"])
    emit({"event": "ending", "then": spec["then"]})
    end_group(spec["then"])


ACTIONS = {"drain": drain, "hold": hold, "churn": churn, "burst": burst, "enqueue_unique": enqueue_unique}


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
