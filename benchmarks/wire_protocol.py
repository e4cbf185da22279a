"""The wire protocol's cost: a no-op round trip, and each op through the wire against the same engine in-process.

- **no-op round trip**: ``unavailable_reason``, which the Node.js engine
  answers without touching storage, awaited one at a time through the
  suite's wire adapter (schema check of the reply included): median and p90.
- **each op**: ``enqueue``, ``get_job``, ``claim_one``, ``heartbeat`` and
  ``ack`` through the wire (``WireAdapter``: the Python surface, the message,
  the pipe, the engine, the reply) against the same JavaScript calls made
  in-process by ``benchmarks/wire_node_inprocess.js``; the difference is
  what the protocol costs per op.
- ``--certify``: the wall time of ``pytest --alkstore-engine=...`` on the
  Node.js engine beside the SQLite reference, on the manual and the system
  clock (the issue's bound: a wire engine's run at most 2x the reference's).

Figures are only for orientation when other work loads the machine; the
script prints ``uptime``'s load average beside them.

Run: ``python benchmarks/wire_protocol.py [--n 2000] [--runs 3] [--certify]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from alkstore_contract.surface import JobHandle
from alkstore_contract.wire.adapter import WireAdapter, load_wire_adapter

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / "engines_under_test" / "alkstore_node" / "alkstore-engine.toml"
IN_PROCESS = REPO / "benchmarks" / "wire_node_inprocess.js"
OPS = ("enqueue", "get_job", "claim_one", "heartbeat", "ack")


async def round_trips_us(adapter: WireAdapter, n: int) -> list[float]:
    process = adapter.process()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await process.request("unavailable_reason", {})
        times.append((time.perf_counter() - started) * 1e6)
    return times


async def wire_ops_us(adapter: WireAdapter, n: int) -> dict[str, float]:
    location = await adapter.create_location()
    store = await adapter.open_store(location, seed=1)
    queue = store.queue("bench")
    per_op: dict[str, float] = {}

    async def timed(op: str, calls: list[object]) -> list[object]:
        started = time.perf_counter()
        out = [await call for call in calls]  # type: ignore[misc]
        per_op[op] = (time.perf_counter() - started) * 1e6 / n
        return out

    ids = await timed("enqueue", [queue.enqueue({"n": 1}) for _ in range(n)])
    await timed("get_job", [queue.get_job(job_id) for job_id in ids])  # type: ignore[arg-type]
    handles: list[JobHandle] = []
    started = time.perf_counter()
    for _ in range(n):
        handle = await queue.claim_one("w")
        assert handle is not None
        handles.append(handle)
    per_op["claim_one"] = (time.perf_counter() - started) * 1e6 / n
    await timed("heartbeat", [handle.heartbeat() for handle in handles])
    await timed("ack", [handle.ack() for handle in handles])
    await store.close()
    await adapter.drop_location(location)
    return per_op


def in_process_us(n: int, runs: int) -> dict[str, list[float]]:
    done = subprocess.run(["node", str(IN_PROCESS), str(n), str(runs)], capture_output=True, text=True, check=True)
    loaded: dict[str, list[float]] = json.loads(done.stdout)
    return loaded


def certify_s(engine: str, clock: str) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        subprocess.run(
            [
                *(sys.executable, "-m", "pytest", "-c", os.devnull, "-q", "-p", "no:cacheprovider"),
                *("--rootdir", scratch, f"--alkstore-engine={engine}", f"--alkstore-clock={clock}", scratch),
            ],
            cwd=scratch,
            capture_output=True,
            check=False,
        )
        return time.perf_counter() - started


def say(line: str) -> None:
    sys.stdout.write(line + "\n")


def measure(
    manifest: Path, engine: str, in_process: Callable[[int, int], dict[str, list[float]]], description: str
) -> None:
    """Parse the command line, then print the round trip, each op against ``in_process``, and (``--certify``) the
    certify times: the one report of every wire engine's benchmark."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--certify", action="store_true")
    args = parser.parse_args()
    say(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    adapter = load_wire_adapter(str(manifest))
    try:
        trips = asyncio.run(round_trips_us(adapter, args.n * args.runs))
        quantiles = statistics.quantiles(trips, n=10)
        median = statistics.median(trips)
        say(f"no-op round trip: median {median:.1f} µs, p90 {quantiles[-1]:.1f} µs ({len(trips)} trips)")
        wire_runs = [asyncio.run(wire_ops_us(adapter, args.n)) for _ in range(args.runs)]
    finally:
        adapter.shutdown()
    local = in_process(args.n, args.runs)
    say(f"{'op':<10} {'wire µs':>9} {'in-process µs':>14} {'protocol µs':>12}")
    for op in OPS:
        wire = statistics.median(run[op] for run in wire_runs)
        here = statistics.median(local[op])
        say(f"{op:<10} {wire:>9.1f} {here:>14.1f} {wire - here:>12.1f}")
    if args.certify:
        for clock in ("manual", "system"):
            sqlite, tested = certify_s("sqlite", clock), certify_s(str(manifest), clock)
            say(
                f"certify on the {clock} clock: sqlite {sqlite:.1f} s, {engine} {tested:.1f} s ({tested / sqlite:.2f}x)"
            )
    say(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


def main() -> None:
    measure(MANIFEST, "node", in_process_us, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
