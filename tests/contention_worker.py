"""One OS process of the SQLite contention test (tests/test_sqlite_contention.py).

``python tests/contention_worker.py '<json spec>'`` opens ``stores`` stores on
the spec's SQLite file and runs ``tasks_per_store`` tasks on each for
``seconds``: a seeded random mix of enqueue, claim, ack, retry, fail,
heartbeat and sweep, as fast as the file's write lock lets them. Some handles
are held past their lease, so other processes reclaim those jobs and the late
release is fenced out.

An ``sqlite3.Error`` (``database is locked`` above all) that reaches this
caller is recorded, not raised: the parent asserts there were none, and sees
them all. Anything else is a crash with a traceback on stderr. At the end
one JSON document on stdout reports every op count, every error, every
enqueued id, every handout and every release, for the history checker.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import QueueOpts

OPS = ("enqueue", "claim", "release", "heartbeat", "sweep")
WEIGHTS = (12, 30, 40, 6, 4)
MAX_HELD = 4
OVERSTAY = 0.08
"""Share of claims left alone until their lease has lapsed, so other processes reclaim them."""


@dataclass
class Report:
    """What one process did, sent to the parent as JSON."""

    proc: int
    ops: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    enqueued: list[int] = field(default_factory=list)
    handouts: list[dict[str, Any]] = field(default_factory=list)
    releases: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Held:
    handle: JobHandle
    claim: str
    release_after: float
    """``time.monotonic()`` before which this task leaves the handle alone."""


class Task:
    """One asyncio task's loop: random ops on one queue of one store."""

    def __init__(self, queue: Queue, worker: str, report: Report, rng: random.Random, vt_s: float) -> None:
        self.queue = queue
        self.worker = worker
        self.report = report
        self.rng = rng
        self.vt_s = vt_s
        self.held: list[Held] = []
        self.claims = 0

    async def run(self, until: float) -> None:
        while time.monotonic() < until:
            op = self.rng.choices(OPS, WEIGHTS)[0]
            try:
                await self.step(op)
            except sqlite3.Error as exc:
                self.report.errors.append(f"{op}: {type(exc).__name__}: {exc}")
        for held in self.held:
            await self.release(held, "ack")

    async def step(self, op: str) -> None:
        """Do ``op`` if it applies now (a release needs a handle that is due); count what was done."""
        if op == "enqueue":
            expires = self.rng.choice((None, None, None, 0.3))
            self.report.enqueued.append(int(await self.queue.enqueue({"by": self.worker}, expires=expires)))
        elif op == "claim" and len(self.held) < MAX_HELD:
            await self.claim()
        elif op == "release" and (due := [h for h in self.held if h.release_after <= time.monotonic()]):
            held = self.rng.choice(due)
            self.held.remove(held)
            await self.release(held, self.rng.choices(("ack", "retry", "fail"), (70, 25, 5))[0])
            return  # counted by outcome in release()
        elif op == "heartbeat" and self.held:
            await self.rng.choice(self.held).handle.heartbeat()
        elif op == "sweep":
            await self.queue.sweep_expired()
        else:
            return
        self.report.ops[op] += 1

    async def claim(self) -> None:
        for handle in await self.queue.claim_batch(self.worker, self.rng.randint(1, 2)):
            self.claims += 1
            claim = f"{self.worker}#{self.claims}"
            job = handle.job
            assert job.lease_expires_at is not None
            self.report.handouts.append(
                {
                    "job": job.id,
                    "worker": self.worker,
                    "claim": claim,
                    "lease": job.lease_expires_at.isoformat(),
                    "vt": job.visibility_timeout_s,
                    "attempts": job.attempts,
                }
            )
            overstay = self.rng.random() < OVERSTAY
            release_after = time.monotonic() + (self.vt_s * 1.2 if overstay else 0.0)
            self.held.append(Held(handle, claim, release_after))

    async def release(self, held: Held, op: str) -> None:
        if op == "ack":
            ok = await held.handle.ack()
        elif op == "retry":
            ok = await held.handle.retry(error="contention", delay=self.rng.choice((0, 0.05)))
        else:
            ok = await held.handle.fail(error="contention")
        self.report.ops[f"{op}{'' if ok else '_fenced'}"] += 1
        self.report.releases.append({"job": held.handle.job.id, "claim": held.claim, "op": op, "ok": ok})


async def main(spec: dict[str, Any]) -> Report:
    adapter = load_adapter("sqlite")
    proc = int(spec["proc"])
    report = Report(proc=proc)
    rng = random.Random(int(spec["seed"]) * 1000 + proc)
    opts = QueueOpts(visibility_timeout_s=float(spec["vt_s"]), max_attempts=int(spec["max_attempts"]))
    stores = [await adapter.open_store(spec["location"], seed=rng.randrange(2**32)) for _ in range(int(spec["stores"]))]
    until = time.monotonic() + float(spec["seconds"])
    try:
        tasks = [
            Task(
                store.queue(spec["queue"], opts),
                f"p{proc}s{s}t{t}",
                report,
                random.Random(rng.random()),
                opts.visibility_timeout_s,
            )
            for s, store in enumerate(stores)
            for t in range(int(spec["tasks_per_store"]))
        ]
        await asyncio.gather(*(task.run(until) for task in tasks))
    finally:
        for store in stores:
            await store.close()
    return report


if __name__ == "__main__":
    done = asyncio.run(main(json.loads(sys.argv[1])))
    json.dump(
        {
            "proc": done.proc,
            "ops": dict(done.ops),
            "errors": done.errors,
            "enqueued": done.enqueued,
            "handouts": done.handouts,
            "releases": done.releases,
        },
        sys.stdout,
    )
