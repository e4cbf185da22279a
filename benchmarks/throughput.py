"""Throughput of the alkstore engines against their drivers' own limits and the Python peers.

For each engine (sqlite, postgres, mem) and each path — ``enqueue`` (one job a
call), ``enqueue_many`` (100 a call), ``claim_one`` + ``ack``, ``claim_batch(100)``
+ ``ack_batch`` — with 1 and 4 concurrent workers (asyncio tasks on one
store), and in the same run:

- the raw-driver baseline of each path: the engine's own SQL through the bare
  driver (aiosqlite and stdlib ``sqlite3`` for sqlite, asyncpg for postgres);
- where installed, pgqueuer and procrastinate doing the same work on the same
  Postgres (enqueue batches of 100; consume a backlog with 4 workers).

Runs are interleaved (run 1 of every row, then run 2 of every row, ...) so a
machine whose load drifts hurts every row alike, and every other run goes
through the rows backwards, so an implementation and its baseline (adjacent
rows) take turns going first: a machine that speeds up or slows down over a
pair's few seconds favours neither side across the runs. On Postgres every
pass (the peers' too) begins with a ``CHECKPOINT``, untimed and before its
backlog is stored (``bench.checkpoint``), so none has a checkpoint inside it
and all start from the same state. A timed run lasts at least
``--min-seconds`` (2 s): a row whose ``--jobs`` go through sooner (the batched
paths, 10,000 jobs in well under a second) repeats them, each repeat on a fresh
location with its own backlog, and the run's jobs/s is every repeat's jobs over
every repeat's timed seconds, so a job and a job/s mean what they mean in one
pass, and a few busy moments of the machine weigh on a run as little on a fast
row as on a slow one. It prints jobs/s (median of
the runs and min–max), each op's p50/p99 latency, statements and round trips
per job (from a separate, smaller counting run; thread hops on SQLite), the
ratio of alkstore to every baseline and peer, and the targets it is held to; writes
JSON (``--json``) and a bar chart (``--png``).

``--profile`` measures instead where each Postgres job's client time goes
(``bench.profile``): CPU per job by layer, the wait on the server, and the
statements, pool checkouts, tasks and timers per job, for alkstore and the
bare asyncpg baseline on every path and worker count: ``--runs`` timed runs
of ``--jobs`` jobs per row (ten times that on the batched paths), the first
sampled by py-spy, and one counting run of ``--count-jobs``.

Run: ``python benchmarks/throughput.py [--jobs 20000] [--runs 3] [--min-seconds 2] [--engines sqlite,postgres,mem]
[--dsn DSN] [--json PATH] [--png PATH]``, or ``python benchmarks/throughput.py --profile [--jobs 5000]
[--runs 3] [--workers 1,4] [--json PATH]`` (needs the ``bench`` extra: ``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV
from bench import peers, report
from bench.checkpoint import checkpoint
from bench.counting import Tally, counting
from bench.engines import engine_factory
from bench.model import PATHS, Counts, Sample, Series
from bench.workload import DriverFactory, run_path

PROFILE_BATCH_FACTOR = 10
"""``--profile`` runs the batched paths on this many times ``--jobs``: a job there costs a tenth of the CPU."""
BATCHED_PATHS = ("enqueue_many", "claim_batch+ack_batch")

Run = Callable[[int, "Tally | None"], Awaitable[tuple[Sample, Counts | None]]]
"""``(jobs, tally)`` → one timed run of a row (and its counts when a tally is given)."""


@dataclass(slots=True)
class Row:
    """One row of the table and how to run it once."""

    series: Series
    run: Run
    jobs: int


async def timed_run(row: Row, min_seconds: float) -> Sample:
    """One timed run of ``row``: its jobs, repeated until the timed parts add up to ``min_seconds`` (at least once)."""
    samples: list[Sample] = []
    while not samples or sum(sample.seconds for sample in samples) < min_seconds:
        sample, _ = await row.run(row.jobs, None)
        samples.append(sample)
    return Sample.joined(samples)


def _driver_run(
    factory: DriverFactory, path: str, workers: int, settle: Callable[[], Awaitable[None]] | None = None
) -> Run:
    def run(jobs: int, tally: Tally | None) -> Awaitable[tuple[Sample, Counts | None]]:
        return run_path(factory, path, workers, jobs, tally, settle)

    return run


def _peer_run(peer: peers.PeerRun, dsn: str, workers: int) -> Run:
    def run(jobs: int, tally: Tally | None) -> Awaitable[tuple[Sample, Counts | None]]:
        return peer(dsn, workers, jobs, tally)

    return run


def _rows(args: argparse.Namespace, postgres_ok: bool) -> list[Row]:
    rows: list[Row] = []

    def add(engine: str, impl: str, path: str, workers: int, run: Run, jobs: int, note: str = "") -> None:
        rows.append(Row(Series(engine, impl, path, workers, note), run, jobs))

    def settle_postgres() -> Awaitable[None]:
        return checkpoint(args.dsn)

    for engine in args.engines:
        if engine == "postgres" and not postgres_ok:
            continue
        jobs = args.mem_jobs if engine == "mem" else args.jobs
        settle = settle_postgres if engine == "postgres" else None
        for path in args.paths:
            for workers in args.workers:
                alkstore_run = _driver_run(engine_factory(engine), path, workers, settle)
                add(engine, report.ALKSTORE, path, workers, alkstore_run, jobs)
                if engine == "sqlite":
                    from bench import sqlite_raw

                    add(engine, report.AIOSQLITE, path, workers, _driver_run(sqlite_raw.AIOSQLITE, path, workers), jobs)
                    if workers == 1:
                        add(engine, report.STDLIB, path, 1, _driver_run(sqlite_raw.STDLIB, path, 1), jobs)
                if engine == "postgres":
                    from bench import postgres_raw

                    raw = postgres_raw.open_asyncpg
                    add(engine, report.ASYNCPG, path, workers, _driver_run(raw, path, workers, settle), jobs)
        if engine == "postgres" and args.peers:
            found = peers.installed()
            if "pgqueuer" in found:
                for workers in args.workers:
                    add(
                        engine,
                        report.PGQUEUER,
                        "enqueue_many",
                        workers,
                        _peer_run(peers.pgqueuer_enqueue_many, args.dsn, workers),
                        jobs,
                    )
                for size in peers.PGQUEUER_BATCH_SIZES:
                    impl = f"{report.PGQUEUER} (batch_size={size})"
                    add(engine, impl, report.CONSUME, 4, _peer_run(peers.pgqueuer_consume(size), args.dsn, 4), jobs)
            if "procrastinate" in found:
                note = "procrastinate: one worker with concurrency=4, delete_jobs='always'; psycopg's pure-Python build"
                for workers in args.workers:
                    add(
                        engine,
                        report.PROCRASTINATE,
                        "enqueue_many",
                        workers,
                        _peer_run(peers.procrastinate_enqueue_many, args.dsn, workers),
                        jobs,
                    )
                proc_jobs = min(jobs, args.procrastinate_jobs)
                add(
                    engine,
                    report.PROCRASTINATE,
                    report.CONSUME,
                    4,
                    _peer_run(peers.procrastinate_consume, args.dsn, 4),
                    proc_jobs,
                    note,
                )
    return rows


async def _postgres_reason() -> str | None:
    from alkstore_contract.suite.registry import load_adapter

    return await load_adapter("postgres").unavailable_reason()


async def _server_version(dsn: str) -> str:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        server: str = await conn.fetchval("SHOW server_version")
    finally:
        await conn.close()
    return server


def _meta(args: argparse.Namespace, server: str | None, loads: list[tuple[float, float, float]]) -> dict[str, Any]:
    versions = {name: _version(name) for name in ("alkstore", "aiosqlite", "asyncpg", "pgqueuer", "procrastinate")}
    return {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "postgres": server,
            "load_average_1_5_15": {"start": loads[0], "end": loads[-1]},
        },
        "versions": versions,
        "jobs": args.jobs,
        "mem_jobs": args.mem_jobs,
        "runs": args.runs,
        "min_seconds": args.min_seconds,
        "workers": args.workers,
    }


def _version(name: str) -> str | None:
    try:
        return version(name)
    except Exception:
        return None


def _progress(text: str) -> None:
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()


def _header(meta: dict[str, Any], loads: list[tuple[float, float, float]]) -> str:
    """When, where and how a run was taken: the date, the command and the load it ran under."""
    start, end = loads[0], loads[-1]
    return (
        f"{meta['started']} to {meta['date']}; `{meta['command']}`; load average (1, 5, 15 min) "
        f"{start[0]:.2f} {start[1]:.2f} {start[2]:.2f} at the start, {end[0]:.2f} {end[1]:.2f} {end[2]:.2f} at the end"
    )


async def profile_main(args: argparse.Namespace) -> int:
    """``--profile``: each Postgres path's client time per job, by layer, for alkstore and bare asyncpg."""
    from bench import postgres_raw, profile, server_cpu

    reason = await _postgres_reason()
    if reason is not None:
        _progress(f"postgres unavailable: {reason}")
        return 1
    server = await _server_version(args.dsn)
    postmaster = await server_cpu.postmaster_of(args.dsn)
    if postmaster is None:
        _progress("the server's processes are not on this machine (or cannot be read): no server CPU per job")
    factories = {report.ALKSTORE: engine_factory("postgres"), report.ASYNCPG: postgres_raw.open_asyncpg}
    profiles = [
        profile.Profile(path, workers, impl) for path in args.paths for workers in args.workers for impl in factories
    ]

    def jobs_of(p: profile.Profile) -> int:
        jobs: int = args.jobs
        return jobs * (PROFILE_BATCH_FACTOR if p.path in BATCHED_PATHS else 1)

    loads = [os.getloadavg()]
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    for run in range(args.runs):
        for p in profiles:
            await profile.timed_run(p, factories[p.impl], jobs_of(p), sample=run == 0, postmaster=postmaster)
            _progress(f"run {run + 1}/{args.runs} {p.path:22} {p.workers}w {p.impl:14} {p.cpu_us[-1]:8.1f} µs CPU/job")
    for p in profiles:
        await profile.counting_run(p, factories[p.impl], min(jobs_of(p), args.count_jobs))
    loads.append(os.getloadavg())
    meta = _meta(args, server, loads)
    meta["started"] = started_at
    meta["seconds"] = round(time.perf_counter() - started, 1)
    sys.stdout.write(
        f"alkstore Postgres profile: Postgres {server}; {args.jobs:,} jobs per timed run "
        f"({args.jobs * PROFILE_BATCH_FACTOR:,} on the batched paths), {args.runs} runs; "
        f"counts from a run of {args.count_jobs:,}\n{_header(meta, loads)}\n\n" + profile.tables(profiles) + "\n"
    )
    if args.json is not None:
        args.json.write_text(profile.document(profiles, meta) + "\n")
    return 0


async def main(args: argparse.Namespace) -> int:
    os.environ[DSN_ENV] = args.dsn
    if args.profile:
        return await profile_main(args)
    postgres_ok = False
    server = None
    if "postgres" in args.engines:
        reason = await _postgres_reason()
        if reason is not None:
            _progress(f"postgres skipped: {reason}")
        else:
            postgres_ok = True
            server = await _server_version(args.dsn)
    rows = _rows(args, postgres_ok)
    loads = [os.getloadavg()]
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    for run in range(args.runs):
        for row in rows if run % 2 == 0 else rows[::-1]:
            s = row.series
            sample = await timed_run(row, args.min_seconds)
            s.samples.append(sample)
            where = f"{s.engine:8} {s.path:22} {s.workers}w {s.impl:30}"
            _progress(f"run {run + 1}/{args.runs} {where} {sample.rate:>10,.0f} jobs/s ({sample.repeats}×)")
    if args.count_jobs > 0:
        with counting() as tally:
            for row in rows:
                _, row.series.counts = await row.run(min(row.jobs, args.count_jobs), tally)
    loads.append(os.getloadavg())
    series = [row.series for row in rows]
    meta = _meta(args, server, loads)
    meta["started"] = started_at
    meta["seconds"] = round(time.perf_counter() - started, 1)
    machine = meta["machine"]
    out = sys.stdout
    out.write(
        f"alkstore throughput: {machine['cpus']} CPUs, Python {machine['python']}, SQLite {machine['sqlite']}, "
        f"Postgres {server or 'not run'}; {args.jobs:,} jobs per pass ({args.mem_jobs:,} on mem), "
        f"repeated to at least {args.min_seconds:g} s of timed work a run; median of {args.runs} runs\n"
        f"{_header(meta, loads)}\n\n"
    )
    out.write(report.results_table(series) + "\n\n")
    out.write(report.targets_table(series) + "\n")
    if args.json is not None:
        args.json.write_text(report.as_json(series, meta) + "\n")
    if args.png is not None:
        report.draw(series, args.png, f"alkstore throughput — {meta['command']}")
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per run (default 20000)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per row; the median is reported (default 3)")
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=2.0,
        help="a timed run repeats its jobs (each pass on a fresh location) until it has taken this long (default 2)",
    )
    parser.add_argument(
        "--engines", default="sqlite,postgres,mem", help="comma-separated engines (default sqlite,postgres,mem)"
    )
    parser.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated paths (default {','.join(PATHS)})")
    parser.add_argument("--workers", default="1,4", help="comma-separated worker counts (default 1,4)")
    parser.add_argument(
        "--dsn",
        default=os.environ.get(DSN_ENV, DEFAULT_DSN),
        help=f"Postgres DSN (default ${DSN_ENV} or {DEFAULT_DSN})",
    )
    parser.add_argument("--mem-jobs", type=int, default=100_000, help="jobs per run on mem (default 100000)")
    parser.add_argument(
        "--procrastinate-jobs", type=int, default=2_000, help="backlog of procrastinate's consume (slow; default 2000)"
    )
    parser.add_argument("--count-jobs", type=int, default=2_000, help="jobs of each counting run (0: no counting)")
    parser.add_argument("--no-peers", dest="peers", action="store_false", help="leave out pgqueuer and procrastinate")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile the Postgres paths (CPU per job by layer, counts per job) instead of comparing throughput",
    )
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    parser.add_argument("--png", type=Path, help="draw the bar chart here (PNG)")
    args = parser.parse_args(argv)
    args.engines = [name for name in args.engines.split(",") if name]
    args.paths = [name for name in args.paths.split(",") if name]
    args.workers = [int(n) for n in args.workers.split(",") if n]
    if not args.min_seconds >= 0:
        parser.error(f"--min-seconds {args.min_seconds}: must be a number of seconds >= 0")
    unknown = [p for p in args.paths if p not in PATHS] + [e for e in args.engines if e not in report.ENGINE_ORDER]
    if unknown:
        parser.error(f"unknown paths or engines: {', '.join(unknown)}")
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse())))
