"""Client instructions per job of the Postgres engine and of bare asyncpg running its statements, counted by cachegrind.

On a shared machine a wall-clock ratio moves 0.1-0.3 from one run to the
next, and even the CPU time per job doubles when the host is busy; the
number of instructions the client process executes per job does not. So
each row (a path, a worker count, alkstore or the bare asyncpg baseline of
``throughput.py``) runs its workload in a child process under ``valgrind
--tool=cachegrind --cache-sim=no`` and reads the child's instruction count
(``I refs``: user space only; the kernel's socket and ``epoll`` work is the
same for both sides and is not counted). The child does only the workload's
timed part, on a location this process prepared (the backlog of the consume
paths is stored beforehand, outside valgrind); it runs twice, with
``--small`` and with ``--big`` jobs (ten times that on the batched paths),
and the difference over the difference in jobs is the cost of one job, with
the interpreter's start-up, the imports and the connections taken out. What
a job's count holds besides the implementation's own work is the same for
both sides: the benchmark's worker loop (a latency reading an op) and, on
``enqueue`` and ``enqueue_many``, building the job's payload.
The count hardly depends on what else the machine is doing: the server
answers with different timing, so the event loop turns a little differently
(a few per cent of scatter, measured: the bare driver's ``enqueue`` at 147,840
to 154,584 instructions a job in four runs), against two to three times in
wall-clock time.

It measures the client only: the server's work per job is the same
statements for both sides. Use it to decide whether a change to the engine's
Python is worth its complexity; use ``throughput.py`` for what a user sees.

Run: ``python benchmarks/pg_instructions.py [--paths claim_one+ack] [--workers 1,4] [--small 200] [--big 1200]
[--dsn DSN] [--json PATH]`` (needs ``valgrind``: Debian's package of that name).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV
from bench import report
from bench.engines import attach_engine
from bench.model import PATHS
from bench.postgres_raw import attach_asyncpg
from bench.workload import Driver, batches, drive, load_backlog

from alkstore_contract.suite.registry import load_adapter

IMPLEMENTATIONS = (report.ALKSTORE, report.ASYNCPG)
BATCHED_FACTOR = 10
"""The batched paths run ten times the jobs: a job there costs about a tenth."""
I_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


async def _attach(impl: str, location: str) -> Driver:
    return await (attach_engine("postgres", location) if impl == report.ALKSTORE else attach_asyncpg(location))


async def child(impl: str, path: str, workers: int, jobs: int, location: str) -> None:
    """The measured process: open ``impl`` on ``location``, do ``path``'s timed part, close."""
    driver = await _attach(impl, location)
    try:
        await driver.warm_up(workers)
        payloads = batches(jobs) if path == "enqueue_many" else []
        done = await drive(driver, path, workers, jobs, payloads, [])
    finally:
        await driver.close()
    if done != jobs:
        raise SystemExit(f"{impl} {path}: {done} of {jobs} jobs went through")


async def prepare(path: str, jobs: int) -> str:
    """A fresh location, with the backlog of ``jobs`` jobs stored when ``path`` consumes one."""
    location = await load_adapter("postgres").create_location()
    if path.startswith("claim"):
        loader = await attach_engine("postgres", location)
        try:
            await load_backlog(loader, batches(jobs))
        finally:
            await loader.close()
    return location


def instructions(valgrind: str, impl: str, path: str, workers: int, jobs: int) -> int:
    """The client instructions of one child run of ``jobs`` jobs, on a location prepared for it."""
    location = asyncio.run(prepare(path, jobs))
    try:
        done = subprocess.run(
            [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
             __file__, "--child", impl, path, str(workers), str(jobs), location],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        asyncio.run(load_adapter("postgres").drop_location(location))
    found = I_REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{impl} {path} {workers}w under valgrind exited {done.returncode}:\n{done.stderr[-3000:]}")
    return int(found.group(1).replace(",", ""))


def main(args: argparse.Namespace) -> int:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.stderr.write("valgrind is not installed (Debian: apt-get install valgrind)\n")
        return 1
    reason = asyncio.run(load_adapter("postgres").unavailable_reason())
    if reason is not None:
        sys.stderr.write(f"postgres unavailable: {reason}\n")
        return 1
    loads = [os.getloadavg()]
    started = datetime.now(UTC).isoformat(timespec="seconds")
    rows: list[dict[str, object]] = []
    for path in args.paths:
        factor = BATCHED_FACTOR if path in ("enqueue_many", "claim_batch+ack_batch") else 1
        small, big = args.small * factor, args.big * factor
        for workers in args.workers:
            per_job: dict[str, float] = {}
            for impl in IMPLEMENTATIONS:
                counts = [instructions(valgrind, impl, path, workers, jobs) for jobs in (small, big)]
                per_job[impl] = (counts[1] - counts[0]) / (big - small)
                sys.stderr.write(f"{path:22} {workers}w {impl:14} {per_job[impl]:>10,.0f} instructions/job\n")
            rows.append({"path": path, "workers": workers, "jobs": [small, big], "instructions_per_job": per_job})
    loads.append(os.getloadavg())
    ended = datetime.now(UTC).isoformat(timespec="seconds")
    command = " ".join([Path(sys.executable).name, *sys.argv])
    out = [
        f"alkstore Postgres client instructions per job (cachegrind); {started} to {ended}; `{command}`; "
        f"load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in loads[0])} at the start, "
        f"{' '.join(f'{x:.2f}' for x in loads[-1])} at the end",
        "",
        f"| path | workers | {report.ALKSTORE} | {report.ASYNCPG} | alkstore ÷ raw |",
        "|---|--:|--:|--:|--:|",
    ]
    for row in rows:
        per = row["instructions_per_job"]
        assert isinstance(per, dict)
        alk, raw = per[report.ALKSTORE], per[report.ASYNCPG]
        out.append(f"| {row['path']} | {row['workers']} | {alk:,.0f} | {raw:,.0f} | {alk / raw:.2f} |")
    sys.stdout.write("\n".join(out) + "\n")
    if args.json is not None:
        meta = {"command": command, "started": started, "date": ended, "load_average_1_5_15": loads}
        args.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated paths (default {','.join(PATHS)})")
    parser.add_argument("--workers", default="1,4", help="comma-separated worker counts (default 1,4)")
    parser.add_argument("--small", type=int, default=200, help="jobs of the shorter run (default 200; x10 batched)")
    parser.add_argument("--big", type=int, default=1200, help="jobs of the longer run (default 1200; x10 batched)")
    default_dsn = os.environ.get(DSN_ENV, DEFAULT_DSN)
    parser.add_argument("--dsn", default=default_dsn, help=f"Postgres DSN (default ${DSN_ENV} or {DEFAULT_DSN})")
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    args.paths = [name for name in args.paths.split(",") if name]
    args.workers = [int(n) for n in args.workers.split(",") if n]
    unknown = [p for p in args.paths if p not in PATHS]
    if unknown:
        parser.error(f"unknown paths: {', '.join(unknown)}")
    if not 0 < args.small < args.big:
        parser.error(f"--small {args.small} --big {args.big}: need 0 < small < big")
    os.environ[DSN_ENV] = args.dsn
    return args


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        impl, path, workers, jobs, location = sys.argv[2:7]
        asyncio.run(child(impl, path, int(workers), int(jobs), location))
        sys.exit(0)
    sys.exit(main(parse()))
