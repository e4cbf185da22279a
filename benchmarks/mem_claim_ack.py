"""Claim-and-ack throughput of the in-memory engine on a large backlog.

Fills a fresh space with a backlog (100 000 jobs by default, via ``enqueue_many``,
not timed), then drains it with one worker and times the drain, for two paths:

- ``claim_one + ack``: one job per claim, acked through its handle;
- ``claim_batch(100) + ack_batch``: a hundred jobs per claim, acked by id in one call.

Each path runs ``--runs`` times (3 by default) on a fresh backlog; the table
shows the median jobs/s and the min-max range. The store uses its default
(system) clock, as production would.

Run: ``python benchmarks/mem_claim_ack.py [--jobs N] [--runs R] [--batch B]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable

import alkstore_mem

from alkstore_contract import Queue

Drain = Callable[[Queue], Awaitable[int]]


async def drain_one_by_one(queue: Queue) -> int:
    drained = 0
    while (handle := await queue.claim_one("bench")) is not None:
        await handle.ack()
        drained += 1
    return drained


def batch_drain(size: int) -> Drain:
    async def drain(queue: Queue) -> int:
        drained = 0
        while handles := await queue.claim_batch("bench", size):
            drained += await queue.ack_batch([handle.job.id for handle in handles])
        return drained

    return drain


async def jobs_per_second(drain: Drain, jobs: int) -> float:
    """Fill a fresh space with ``jobs`` jobs, drain it with ``drain``, return the drain's jobs/s."""
    space = f"bench-{uuid.uuid4().hex}"
    store = await alkstore_mem.open_store(space)
    try:
        queue = store.queue("bench")
        await queue.enqueue_many([{"n": n} for n in range(jobs)])
        started = time.perf_counter()
        drained = await drain(queue)
        elapsed = time.perf_counter() - started
    finally:
        await store.close()
        await alkstore_mem.adapter.drop_location(space)
    if drained != jobs:
        raise RuntimeError(f"drained {drained} of {jobs} jobs")
    return jobs / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000, help="backlog size (default 100000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per path (default 3)")
    parser.add_argument("--batch", type=int, default=100, help="claim_batch size (default 100)")
    args = parser.parse_args()
    paths: list[tuple[str, Drain]] = [
        ("claim_one + ack", drain_one_by_one),
        (f"claim_batch({args.batch}) + ack_batch", batch_drain(args.batch)),
    ]
    out = sys.stdout
    out.write(f"alkstore_mem: drain a {args.jobs}-job backlog, median of {args.runs} runs\n\n")
    out.write(f"| {'path':<30} | {'jobs/s (median)':>15} | {'min-max jobs/s':>19} |\n")
    out.write(f"|{'-' * 32}|{'-' * 16}:|{'-' * 20}:|\n")
    for label, drain in paths:
        rates = [await jobs_per_second(drain, args.jobs) for _ in range(args.runs)]
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}"
        out.write(f"| {label:<30} | {statistics.median(rates):>15,.0f} | {spread:>19} |\n")


if __name__ == "__main__":
    asyncio.run(main())
