"""The wire protocol's cost on the Rust engine: benchmarks/wire_protocol.py's measures, against alkstore_rust.

- **no-op round trip**: ``unavailable_reason`` (answered without storage) through the suite's wire
  adapter, one at a time: median and p90.
- **each op**: ``enqueue``, ``get_job``, ``claim_one``, ``heartbeat`` and ``ack`` through the wire
  against the same requests handed to the engine's ``Engine::handle`` in-process
  (``engines_under_test/alkstore_rust/examples/inprocess.rs``); the difference is the protocol's cost.
- ``--certify``: the wall time of ``pytest --alkstore-engine=...`` on the Rust engine beside the SQLite
  reference, on the manual and the system clock.

Build first (``bash ci/rust.sh install``). Figures are only for orientation when other work loads the
machine; the script prints ``uptime``'s load average beside them.

Run: ``python benchmarks/wire_rust.py [--n 2000] [--runs 3] [--certify]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess

from alkstore_contract.wire.adapter import load_wire_adapter
from benchmarks.wire_protocol import OPS, REPO, certify_s, round_trips_us, say, wire_ops_us

ENGINE_DIR = REPO / "engines_under_test" / "alkstore_rust"
MANIFEST = ENGINE_DIR / "alkstore-engine.toml"


def in_process_us(n: int, runs: int) -> dict[str, list[float]]:
    command = ["cargo", "run", "--release", "--offline", "--quiet", "--example", "inprocess", "--", str(n), str(runs)]
    done = subprocess.run(command, cwd=ENGINE_DIR, capture_output=True, text=True, check=True)
    loaded: dict[str, list[float]] = json.loads(done.stdout)
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--certify", action="store_true")
    args = parser.parse_args()
    say(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    adapter = load_wire_adapter(str(MANIFEST))
    try:
        trips = asyncio.run(round_trips_us(adapter, args.n * args.runs))
        quantiles = statistics.quantiles(trips, n=10)
        say(f"no-op round trip: median {statistics.median(trips):.1f} µs, p90 {quantiles[-1]:.1f} µs ({len(trips)})")
        wire_runs = [asyncio.run(wire_ops_us(adapter, args.n)) for _ in range(args.runs)]
    finally:
        adapter.shutdown()
    local = in_process_us(args.n, args.runs)
    say(f"{'op':<10} {'wire µs':>9} {'in-process µs':>14} {'protocol µs':>12}")
    for op in OPS:
        wire = statistics.median(run[op] for run in wire_runs)
        here = statistics.median(local[op])
        say(f"{op:<10} {wire:>9.1f} {here:>14.1f} {wire - here:>12.1f}")
    if args.certify:
        for clock in ("manual", "system"):
            sqlite, rust = certify_s("sqlite", clock), certify_s(str(MANIFEST), clock)
            say(f"certify on the {clock} clock: sqlite {sqlite:.1f} s, rust {rust:.1f} s ({rust / sqlite:.2f}x)")
    say(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
