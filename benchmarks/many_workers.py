"""Many workers: the claim paths with 16 concurrent workers, in one process and in four.

``throughput.py`` runs 1 and 4 workers in one process. A deployment runs more:
many tasks on one store, and several processes on one file or database, where
SQLite's single writer and Postgres's row locks are contended for real. This
measures, for ``claim_one`` + ``ack`` and ``claim_batch(100)`` + ``ack_batch``:

- **in one process**: 16 concurrent worker tasks on one store (every engine),
  against the bare driver doing the same SQL with 16 tasks (one shared
  aiosqlite connection; 16 asyncpg connections) — ``bench.sqlite_raw`` and
  ``bench.postgres_raw``, the baselines of ``throughput.py``. mem has no
  driver beneath it: its ratio is to mem with one worker;
- **in 4 OS processes × 4 workers** on one location (SQLite and Postgres): each
  process opens its own store (or bare driver) on the file or schema, the
  parent fills the backlog, waits until every process is connected and warmed
  up, then starts them at once and times until the last is done.

Every worker loops until a claim finds nothing. An exception a worker meets
(``database is locked``, a deadlock, a serialization failure) is counted by
type and the worker goes on: the table shows the count, which must be 0 on
SQLite (its busy timeout makes a waiting writer wait, not fail) and on Postgres
(``SKIP LOCKED`` claims). A job whose claim or ack failed stays claimed, so a
run with errors also shows fewer jobs through than were enqueued.

Rows run interleaved (run 1 of every row, then run 2, ...); each figure is the
median of the runs, in jobs per second, and the ratio is of medians.

Run: ``python benchmarks/many_workers.py [--engines sqlite,postgres,mem] [--jobs 5000]
[--batch-jobs 40000] [--runs 3] [--json PATH]``; ``--quick`` is a seconds-long smoke
run (tests/test_many_workers_quick.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from alkstore_postgres import open_store as open_postgres_store
from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV
from alkstore_postgres.location import Location
from bench.engines import EngineDriver, attach_engine
from bench.model import BATCH
from bench.postgres_raw import attach_asyncpg
from bench.report import ENGINE_ORDER
from bench.sqlite_raw import attach_aiosqlite, new_aiosqlite_location
from bench.workload import Driver, payload

from alkstore_contract.suite.registry import load_adapter

CLAIM_PATHS = ("claim_one+ack", "claim_batch+ack_batch")
WORKERS = 16
PROCESSES = 4
WORKERS_PER_PROCESS = 4
MULTI_PROCESS_ENGINES = ("sqlite", "postgres")
ENGINE = "alkstore"
RAW = {"sqlite": "aiosqlite", "postgres": "asyncpg"}
"""The bare driver beneath each engine: its name in the table."""


def _progress(text: str) -> None:
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} {text}\n")
    sys.stderr.flush()


async def attach(engine: str, impl: str, location: str, workers: int = 1) -> Driver:
    """A driver of ``impl`` (``alkstore`` or the bare driver) on an existing location of ``engine``.

    A Postgres store's pool is sized to the process's workers (asyncpg's default pool holds 10), as
    the bare driver has a connection per worker: the same concurrency at the server.
    """
    if impl == ENGINE and engine == "postgres":
        parsed = Location.decode(location)
        store = await open_postgres_store(parsed.dsn, schema=parsed.schema, max_size=max(workers, 1))
        return EngineDriver(engine, location, store, owns_location=False)
    if impl == ENGINE:
        return await attach_engine(engine, location)
    return await (attach_aiosqlite if engine == "sqlite" else attach_asyncpg)(location)


async def new_location(engine: str, impl: str) -> str:
    """A fresh location; the bare SQLite driver's is laid out by the engine, as in ``throughput.py``."""
    if impl != ENGINE and engine == "sqlite":
        return await new_aiosqlite_location()
    return await load_adapter(engine).create_location()


MAX_ERRORS = 1_000
"""Errors one run may meet before it stops: past that, the error is not contention but a fault."""


async def run_workers(driver: Driver, path: str, workers: int) -> tuple[int, Counter[str]]:
    """``workers`` tasks doing ``path`` until a claim finds nothing: jobs through, and errors met by type.

    Workers are numbered 0 to ``workers - 1`` in every process: the number picks
    the bare asyncpg driver's connection and names the claimant.
    """
    errors: Counter[str] = Counter()

    async def worker(index: int) -> int:
        done = 0
        while True:
            try:
                if path == "claim_one+ack":
                    got = await driver.claim_one_ack(index)
                else:
                    got = await driver.claim_batch_ack(index, BATCH)
            except Exception as error:  # counted and shown: a lock error must not end the run
                errors[f"{type(error).__name__}: {str(error)[:80]}"] += 1
                if errors.total() > MAX_ERRORS:
                    raise
                continue
            if not got:
                return done
            done += got

    await driver.warm_up(workers)
    done = await asyncio.gather(*(worker(k) for k in range(workers)))
    return sum(done), errors


@dataclass(slots=True)
class Row:
    engine: str
    impl: str
    path: str
    processes: int
    workers: int
    """Worker tasks per process."""
    rates: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    short: int = 0
    """Jobs enqueued that no worker got through (claimed, then an error before the ack)."""

    @property
    def label(self) -> str:
        shape = (
            f"{self.workers} worker{'s' * (self.workers > 1)}"
            if self.processes == 1
            else f"{self.processes} processes × {self.workers}"
        )
        return f"{self.engine} {self.impl} {self.path} {shape}"

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


async def _fill(engine: str, impl: str, location: str, jobs: int) -> None:
    driver = await attach(engine, impl, location)
    try:
        for start in range(0, jobs, BATCH):
            await driver.enqueue_many(0, [payload(n) for n in range(start, min(start + BATCH, jobs))])
    finally:
        await driver.close()


async def _one_process(row: Row, location: str) -> tuple[int, float, Counter[str]]:
    driver = await attach(row.engine, row.impl, location, row.workers)
    try:
        await driver.warm_up(row.workers)
        started = time.perf_counter()
        done, errors = await run_workers(driver, row.path, row.workers)
        return done, time.perf_counter() - started, errors
    finally:
        await driver.close()


async def _read_line(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    line = (await process.stdout.readline()).decode().strip()
    if not line:
        await process.wait()
        raise RuntimeError(f"a worker process ended early (exit {process.returncode})")
    return line


async def _many_processes(row: Row, location: str, dsn: str) -> tuple[int, float, Counter[str]]:
    """Start ``row.processes`` children on ``location``, wait until each is ready, then time them from one go."""
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--child",
            json.dumps([row.engine, row.impl, row.path, location, row.workers]),
            "--dsn",
            dsn,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(row.processes)
    ]
    try:
        for child in children:
            if (line := await _read_line(child)) != "ready":
                raise RuntimeError(f"a worker process said {line!r}, not ready")
        started = time.perf_counter()
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"go\n")
            await child.stdin.drain()
        answers = [json.loads(await _read_line(child)) for child in children]
        seconds = time.perf_counter() - started
    finally:
        for child in children:
            if child.returncode is None:
                await child.wait()
    errors: Counter[str] = Counter()
    for answer in answers:
        errors.update(answer["errors"])
    return sum(answer["done"] for answer in answers), seconds, errors


async def child(spec: str) -> int:
    """One worker process: attach, warm up, say ``ready``, wait for ``go``, work, answer in JSON."""
    engine, impl, path, location, workers = json.loads(spec)
    driver = await attach(engine, impl, location, workers)
    try:
        await driver.warm_up(workers)
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        await asyncio.to_thread(sys.stdin.readline)
        done, errors = await run_workers(driver, path, workers)
    finally:
        await driver.close()
    sys.stdout.write(json.dumps({"done": done, "errors": errors}) + "\n")
    sys.stdout.flush()
    return 0


async def run_row(row: Row, jobs: int, dsn: str) -> None:
    location = await new_location(row.engine, row.impl)
    try:
        await _fill(row.engine, row.impl, location, jobs)
        if row.processes == 1:
            done, seconds, errors = await _one_process(row, location)
        else:
            done, seconds, errors = await _many_processes(row, location, dsn)
    finally:
        await load_adapter(row.engine).drop_location(location)
    if done != jobs and not errors:
        raise RuntimeError(f"{row.label}: {done} of {jobs} jobs went through, and no worker met an error")
    row.rates.append(done / seconds)
    row.errors.update(errors)
    row.short += jobs - done


def rows_for(engines: list[str]) -> list[Row]:
    rows: list[Row] = []
    for engine in engines:
        for path in CLAIM_PATHS:
            impls = [ENGINE, RAW[engine]] if engine in RAW else [ENGINE]
            rows.extend(Row(engine, impl, path, 1, WORKERS) for impl in impls)
            if engine not in RAW:
                rows.append(Row(engine, ENGINE, path, 1, 1))
            if engine in MULTI_PROCESS_ENGINES:
                rows.extend(Row(engine, impl, path, PROCESSES, WORKERS_PER_PROCESS) for impl in impls)
    return rows


def _baseline(row: Row, rows: list[Row]) -> Row | None:
    """The row ``row`` is divided by: the bare driver in the same shape, or (mem) one worker."""
    for other in rows:
        same = other.engine == row.engine and other.path == row.path
        if row.engine in RAW and same and other.impl == RAW[row.engine] and other.processes == row.processes:
            return other
        if row.engine not in RAW and same and other.workers == 1 and row.workers != 1:
            return other
    return None


def table(rows: list[Row]) -> str:
    lines = [
        "| engine | path | workers | alkstore (jobs/s) | baseline | baseline (jobs/s) | ratio | errors"
        " | jobs not through |",
        "|---|---|---|--:|---|--:|--:|--:|--:|",
    ]
    for row in rows:
        if row.impl != ENGINE or (base := _baseline(row, rows)) is None:
            continue
        shape = f"{row.workers} in 1 process" if row.processes == 1 else f"{row.processes} processes × {row.workers}"
        base_name = base.impl if base.impl != ENGINE else "alkstore, 1 worker"
        errors = sum(row.errors.values()) + sum(base.errors.values())
        lines.append(
            f"| {row.engine} | {row.path} | {shape} | {row.median:,.0f} | {base_name} | {base.median:,.0f} | "
            f"{row.median / base.median:.2f}× | {errors} | {row.short + base.short} |"
        )
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> int:
    os.environ[DSN_ENV] = args.dsn
    engines = list(args.engines)
    if "postgres" in engines and (reason := await load_adapter("postgres").unavailable_reason()) is not None:
        _progress(f"postgres skipped: {reason}")
        engines.remove("postgres")
    rows = rows_for(engines)
    loads = [os.getloadavg()]
    date = datetime.now(UTC).isoformat(timespec="seconds")
    for run in range(args.runs):
        for row in rows:
            jobs = args.jobs if row.path == "claim_one+ack" else args.batch_jobs
            await run_row(row, jobs, args.dsn)
            _progress(f"run {run + 1}/{args.runs} {row.label:58} {row.rates[-1]:>10,.0f} jobs/s")
    loads.append(os.getloadavg())
    command = " ".join([Path(sys.executable).name, *sys.argv])
    sys.stdout.write(
        f"alkstore many workers: {os.cpu_count()} CPUs, Python {platform.python_version()}; {date}; "
        f"median of {args.runs} runs; load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in loads[0])} at the "
        f"start, {' '.join(f'{x:.2f}' for x in loads[-1])} at the end\n`{command}`\n\n" + table(rows) + "\n"
    )
    if any(row.errors for row in rows):
        sys.stdout.write("\nErrors met: " + "; ".join(f"{row.label}: {dict(row.errors)}" for row in rows if row.errors))
        sys.stdout.write("\n")
    if args.json is not None:
        document = {
            "meta": {"command": command, "date": date, "load_average_1_5_15": {"start": loads[0], "end": loads[-1]}},
            "rows": [
                {
                    "engine": row.engine,
                    "impl": row.impl,
                    "path": row.path,
                    "processes": row.processes,
                    "workers": row.workers,
                    "rates": row.rates,
                    "median": row.median,
                    "errors": dict(row.errors),
                    "jobs_not_through": row.short,
                }
                for row in rows
            ],
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINE_ORDER), help="comma-separated engines")
    parser.add_argument("--jobs", type=int, default=5_000, help="backlog consumed per run of claim_one+ack")
    parser.add_argument("--batch-jobs", type=int, default=40_000, help="backlog per run of claim_batch+ack_batch")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per row; the median is reported")
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV, DEFAULT_DSN), help="Postgres DSN")
    parser.add_argument("--quick", action="store_true", help="tiny backlogs, one run: a smoke test of seconds")
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.engines = [name for name in args.engines.split(",") if name]
    if unknown := [e for e in args.engines if e not in ENGINE_ORDER]:
        parser.error(f"unknown engines: {', '.join(unknown)}")
    if args.quick:
        args.jobs, args.batch_jobs, args.runs = 400, 2_000, 1
    return args


def entry(args: argparse.Namespace) -> int:
    if args.child is not None:
        os.environ[DSN_ENV] = args.dsn
        return asyncio.run(child(args.child))
    return asyncio.run(main(args))


if __name__ == "__main__":
    sys.exit(entry(parse()))
