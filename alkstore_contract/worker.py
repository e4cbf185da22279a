"""A worker in its own OS process, for the multi-process rows (SPEC P2, C4, crash recovery).

``python -m alkstore_contract.worker '<json spec>'`` opens the engine named in
the spec on the given location and performs one action, writing one JSON
event a line on stdout, each flushed as soon as the op it reports returned:
the parent can kill the process at any moment and trust every line it read.

Actions:
- ``drain``: several stores x several tasks claim and ack until the queue is empty.
- ``hold``: claim up to ``n`` jobs, report them, then wait to be killed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from typing import Any

from alkstore_contract.clock import Clock, ManualClock
from alkstore_contract.registry import load_adapter
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import QueueOpts


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _clock(arg: str) -> Clock | None:
    """``system`` → the engine's own clock; an ISO instant → a manual clock standing still there."""
    return None if arg == "system" else ManualClock(datetime.fromisoformat(arg))


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


ACTIONS = {"drain": drain, "hold": hold}


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
