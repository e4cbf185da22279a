"""What one Postgres claim reads on a fresh backlog of 10k and of 1M jobs: buffers, not seconds.

On a shared machine the wall-clock rate of a claim moves with everyone else's
load; the number of buffers the claim statement touches does not. For each
backlog this fills a fresh store, runs ``--claims`` ``claim_one`` + ``ack``
through the store (so the claim path carries the dead versions a working
queue has, and the store's own vacuum runs as it would), then runs the
engine's own claim statement (``PgDriver.CLAIM_SQL``, rendered for the
store's schema as the driver renders it) for ``--batch`` jobs, ``--samples``
times under ``EXPLAIN (ANALYZE, BUFFERS)`` in a transaction that is rolled
back, and prints the median buffers hit and read and the median execution
time the plan reports.

Run: ``python benchmarks/pg_claim_plan.py [--backlogs 10000,1000000] [--claims 5000] [--samples 25] [--batch 1]``;
``--batch 100`` explains the claim of ``claim_batch(100)``. ``--quick`` is a smoke run of seconds
(``tests/test_benchmarks_start.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from typing import Any

import asyncpg
from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV
from alkstore_postgres.driver import PgDriver
from alkstore_postgres.location import Location
from alkstore_postgres.statements import render
from bench.workload import payload

from alkstore_contract.suite.registry import load_adapter

QUEUE = "plan"


def _buffers(node: dict[str, Any]) -> tuple[int, int]:
    """Shared buffers hit and read by a plan node, its children included (the root's figures already are)."""
    return int(node.get("Shared Hit Blocks", 0)), int(node.get("Shared Read Blocks", 0))


async def measure(backlog: int, args: argparse.Namespace) -> dict[str, float]:
    adapter = load_adapter("postgres")
    location = await adapter.create_location()
    store = await adapter.open_store(location)
    try:
        queue = store.queue(QUEUE)
        for start in range(0, backlog + args.claims, 1_000):
            await queue.enqueue_many([payload(n) for n in range(start, start + 1_000)])
        for _ in range(args.claims):
            handle = await queue.claim_one("w")
            if handle is None or not await handle.ack():
                raise RuntimeError("claim_one+ack failed")
        parsed = Location.decode(location)
        conn = await asyncpg.connect(parsed.dsn)
        try:
            claim = render(PgDriver.CLAIM_SQL, parsed.schema)
            hits, reads, times = [], [], []
            for _ in range(args.samples):
                # Rolled back: the sampled claims leave the backlog as it was.
                transaction = conn.transaction()
                await transaction.start()
                try:
                    text = await conn.fetchval(
                        f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {claim}", None, QUEUE, args.batch, "w", "t"
                    )
                finally:
                    await transaction.rollback()
                plan = json.loads(text)[0]
                hit, read = _buffers(plan["Plan"])
                hits.append(hit)
                reads.append(read)
                times.append(float(plan["Execution Time"]))
        finally:
            await conn.close()
        size: int = await _table_size(location)
    finally:
        await store.close()
        await adapter.drop_location(location)
    return {
        "buffers_hit": statistics.median(hits),
        "buffers_read": statistics.median(reads),
        "execution_ms": statistics.median(times),
        "table_bytes": size,
    }


async def _table_size(location: str) -> int:
    parsed = Location.decode(location)
    conn = await asyncpg.connect(parsed.dsn)
    try:
        size: int = await conn.fetchval("SELECT pg_total_relation_size($1::regclass)", f'"{parsed.schema}".jobs')
    finally:
        await conn.close()
    return size


async def main(args: argparse.Namespace) -> int:
    os.environ[DSN_ENV] = args.dsn
    sys.stdout.write(f"claims of {args.batch}; load average (1 min) at start: {os.getloadavg()[0]:.1f}\n")
    sys.stdout.write("| backlog | buffers hit (median) | buffers read | execution (ms, median) | jobs table |\n")
    sys.stdout.write("|--:|--:|--:|--:|--:|\n")
    for backlog in args.backlogs:
        figures = await measure(backlog, args)
        sys.stdout.write(
            f"| {backlog:,} | {figures['buffers_hit']:.0f} | {figures['buffers_read']:.0f} | "
            f"{figures['execution_ms']:.2f} | {figures['table_bytes'] / 1e6:,.1f} MB |\n"
        )
        sys.stdout.flush()
    sys.stdout.write(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}\n")
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backlogs", default="10000,1000000", help="fresh backlogs, comma-separated")
    parser.add_argument("--claims", type=int, default=5_000, help="claim_one+ack through the store first")
    parser.add_argument("--samples", type=int, default=25, help="claims explained per backlog")
    parser.add_argument("--batch", type=int, default=1, help="jobs each explained claim asks for (default 1)")
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV, DEFAULT_DSN), help="Postgres DSN")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test that runs in seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.backlogs, args.claims, args.samples = "200,1000", 50, 3
    args.backlogs = [int(part) for part in args.backlogs.split(",") if part]
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse())))
