"""Do real-clock runs give the same verdicts on a loaded host? ("the same verdict every time")

Runs the contract suite on the system clock ``--runs`` times, each beside
``--burners`` CPU-bound processes (busy loops that stop with the run), and
compares every engine's certificate line and clause verdicts across the runs.
Prints the load average before and after each run, the measured tick, and
exits 1 when any two runs disagree.

    python benchmarks/verdict_stability.py --engines sqlite,postgres --runs 5 --burners 8
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BURN_LIMIT_S = 900.0
"""A burner stops by itself after this long, even if the run that started it never ends."""


def _burn(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        sum(range(10_000))


def _verdicts(report: dict[str, Any]) -> dict[str, tuple[str, dict[str, str]]]:
    return {
        engine["name"]: (engine["certificate"], {c["clause"]: c["verdict"] for c in engine["clauses"]})
        for engine in report["engines"]
    }


def _run(engines: str, burners: int, scratch: Path, index: int) -> tuple[dict[str, Any], str]:
    report = scratch / f"run-{index}.json"
    stop_at = time.monotonic() + BURN_LIMIT_S
    procs = [multiprocessing.Process(target=_burn, args=(stop_at,), daemon=True) for _ in range(burners)]
    for proc in procs:
        proc.start()
    try:
        time.sleep(5)
        before = os.getloadavg()[0]
        started = time.monotonic()
        # `alkstore certify`, as a user runs the suite: its own scratch directory and pytest configuration
        command = [sys.executable, "-m", "alkstore_cli", "certify", engines, "--clock", "system"]
        command += ["--report", str(report), "--", "-q", "-n", "2"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        took = time.monotonic() - started
        after = os.getloadavg()[0]
    finally:
        for proc in procs:
            proc.terminate()
    found: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    settings = found["settings"]
    line = (
        f"run {index}: exit {done.returncode}, {took:.0f} s, load {before:.1f} -> {after:.1f}; "
        f"tick {settings['tick_s']} s ({settings['tick_source']})"
    )
    return found, line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burners", type=int, default=8, help="CPU-bound processes beside each run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="alkstore-stability-") as scratch:
        seen: list[dict[str, tuple[str, dict[str, str]]]] = []
        for index in range(1, args.runs + 1):
            report, line = _run(args.engines, args.burners, Path(scratch), index)
            sys.stdout.write(line + "\n")
            for name, (certificate, _) in _verdicts(report).items():
                sys.stdout.write(f"  {name}: {certificate}\n")
            seen.append(_verdicts(report))
    differ = [i + 1 for i, found in enumerate(seen) if found != seen[0]]
    if differ:
        sys.stdout.write(f"verdicts differ from run 1 in runs {differ}\n")
        return 1
    sys.stdout.write(f"all {len(seen)} runs gave identical certificates and clause verdicts\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
