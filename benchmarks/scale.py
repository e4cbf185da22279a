"""Scale: does each path cost the same on a big backlog, and after millions of jobs went through?

For each engine (sqlite, postgres, mem), every figure is measured on several
queues built up front, then timed in interleaved runs (run 1 of every queue and
figure, then run 2, ...), and reported as the median of the runs divided by the
same figure on the smallest fresh backlog (10,000 jobs by default):

- queues with a fresh backlog of 10k, 100k and 1M jobs (``--backlogs``, capped
  by ``--max-backlog``);
- a 10k backlog on a queue that ``--churn`` jobs (default: the largest backlog)
  went through first, enqueued, claimed and acked; and one whose churned jobs
  were each claimed, retried once (no delay), claimed again and acked;
- figures: the four paths of ``throughput.py`` (``enqueue``, ``enqueue_many``
  of 100, ``claim_one`` + ``ack``, ``claim_batch(100)`` + ``ack_batch``; claims
  run on a queue topped up so the backlog stays the same), ``get_job`` of a
  random live job, ``sweep_expired`` moving ``--moved`` (1,000) expired jobs
  out of each backlog, and ``sweep_expired`` purging ``--moved`` dead jobs
  past their retention among 10k and ``--kept`` (100k) dead jobs still kept;
- storage per job: bytes on disk for SQLite (the database's pages) and
  Postgres (``pg_total_relation_size`` of the jobs table: heap, indexes,
  TOAST), on each fresh backlog and after each churn; and, on mem, the bytes
  ``tracemalloc`` sees a store keep per job of a 100-byte payload.

Every store runs on a ``ManualClock`` so that expiry and retention can be
reached by advancing it instead of sleeping; the statements are the same ones
the system clock runs (Postgres passes the instant as a parameter either way).
The load average is recorded at the start and end of each engine.

Run: ``python benchmarks/scale.py [--engines sqlite,postgres,mem] [--max-backlog 1000000] [--churn N]
[--runs 3] [--segments 1] [--figures F,G] [--timer wall|cpu] [--json PATH] [--png PATH]``.
``--segments 20`` on mem, whose 1,000 claims take milliseconds: each run then times 20 segments, each
prepared as the first. ``--figures`` times only the figures named, for a reduced run (``--churn 0``
skips the churns; leaving out the purge skips its dead-kept queues). ``--timer cpu`` times mem and
SQLite by this process's CPU time, which a shared machine's load moves far less than the wall clock.
``--quick`` is a seconds-long smoke run with tiny sizes (tests/test_scale_quick.py). Needs the
``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import textwrap
import time
import tracemalloc
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV
from bench.model import BATCH, PATHS
from bench.report import ENGINE_ORDER
from bench.workload import payload

from alkstore_contract.clock import ManualClock
from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import Queue, Store
from alkstore_contract.types import QueueOpts

QUEUE = "scale"
FILL_BATCH = 1_000
"""Jobs per ``enqueue_many`` (and per claim) while building a queue, untimed."""
EXPIRES = timedelta(seconds=60)
PAST_EXPIRY = timedelta(seconds=61)
KEEP_RETENTION = timedelta(days=1)
SHORT_RETENTION = timedelta(seconds=60)
GET_JOB = "get_job"
SWEEP = "sweep_expired (expire)"
PURGE = "sweep_expired (purge)"
FIGURES = (*PATHS, GET_JOB, SWEEP)
MEM_PAYLOAD = {"data": "x" * 88}
"""A payload whose JSON is exactly 100 bytes (the memory figure's payload)."""


def _progress(text: str) -> None:
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} {text}\n")
    sys.stderr.flush()


def _count(n: int) -> str:
    """10000 → 10k, 1000000 → 1M (exact multiples only; other sizes print as they are)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


@dataclass(slots=True)
class Figure:
    """The timed runs of one figure on one queue: ``rate`` is work per second (jobs, calls, or sweeps)."""

    rates: list[float] = field(default_factory=list)
    full_gc_shares: list[float] = field(default_factory=list)
    """Per run, the share of the timed seconds spent in full collections (``FullCollections``)."""

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


@dataclass(slots=True)
class Scene:
    """One queue built to a shape (a backlog, a churn, dead jobs kept), with the ids of its ready jobs in order."""

    engine: str
    label: str
    kind: str
    """``backlog``, ``churn``, ``retry-churn`` or ``kept`` (dead jobs kept, for the purge)."""
    size: int
    location: str
    store: Store
    clock: ManualClock
    queue: Queue
    ready: deque[Any] = field(default_factory=deque)
    """Ids of the ready jobs, oldest first: the order claims take them in (one priority, a clock that only grows)."""
    figures: dict[str, Figure] = field(default_factory=dict)
    bytes_per_job: float | None = None

    def figure(self, name: str) -> Figure:
        return self.figures.setdefault(name, Figure())


async def _open(engine: str, label: str, kind: str, size: int) -> Scene:
    adapter = load_adapter(engine)
    location = await adapter.create_location()
    clock = ManualClock(datetime(2030, 1, 1, tzinfo=UTC))
    store = await adapter.open_store(location, clock=clock)
    return Scene(engine, label, kind, size, location, store, clock, store.queue(QUEUE))


async def _fill(scene: Scene, jobs: int) -> None:
    for start in range(0, jobs, FILL_BATCH):
        items = [payload(n) for n in range(start, min(start + FILL_BATCH, jobs))]
        scene.ready.extend(await scene.queue.enqueue_many(items))


async def _churn(scene: Scene, jobs: int, *, retry: bool) -> None:
    """Put ``jobs`` jobs through the queue: enqueue, claim, (retry once, claim again,) ack — in batches."""
    done = 0
    while done < jobs:
        size = min(FILL_BATCH, jobs - done)
        await scene.queue.enqueue_many([payload(n) for n in range(size)])
        handles = await scene.queue.claim_batch("churn", size)
        if retry:
            await asyncio.gather(*(handle.retry(delay=0) for handle in handles))
            handles = await scene.queue.claim_batch("churn", size)
        acked = await scene.queue.ack_batch([handle.job.id for handle in handles])
        if acked != size:
            raise RuntimeError(f"{scene.label}: churn acked {acked} of {size} jobs")
        done += size


KILL_CHUNK = 20_000
"""Jobs killed per untimed sweep: one sweep moving a million is one statement past Postgres's op timeout."""


async def _kill_expiring(scene: Scene, jobs: int, opts: QueueOpts | None = None) -> None:
    """Add ``jobs`` jobs that expire, let them expire, and sweep them dead (untimed), ``KILL_CHUNK`` at a time."""
    queue = scene.store.queue(QUEUE, opts)
    for chunk in range(0, jobs, KILL_CHUNK):
        size = min(KILL_CHUNK, jobs - chunk)
        for start in range(0, size, FILL_BATCH):
            count = min(FILL_BATCH, size - start)
            await queue.enqueue_many([payload(n) for n in range(start, start + count)], expires=EXPIRES)
        scene.clock.advance(PAST_EXPIRY)
        moved = await scene.queue.sweep_expired()
        if moved != size:
            raise RuntimeError(f"{scene.label}: the sweep moved {moved} jobs, not the {size} that expired")


async def bytes_on_disk(engine: str, location: str) -> int | None:
    """What the jobs take on disk: SQLite's pages in use by the database, Postgres's jobs table with its indexes."""
    if engine == "sqlite":

        def pages() -> int:
            conn = sqlite3.connect(location)
            try:
                count = conn.execute("PRAGMA page_count").fetchone()[0]
                size = conn.execute("PRAGMA page_size").fetchone()[0]
            finally:
                conn.close()
            return int(count) * int(size)

        return await asyncio.to_thread(pages)
    if engine == "postgres":
        import asyncpg
        from alkstore_postgres.location import Location, quote_ident

        parsed = Location.decode(location)
        conn = await asyncpg.connect(parsed.dsn)
        try:
            size: int = await conn.fetchval(
                "SELECT pg_total_relation_size($1::regclass)", f"{quote_ident(parsed.schema)}.jobs"
            )
        finally:
            await conn.close()
        return size
    return None


async def mem_bytes_per_job(jobs: int) -> float:
    """Bytes a mem store keeps per stored job of a 100-byte payload, as ``tracemalloc`` counts them."""
    adapter = load_adapter("mem")
    location = await adapter.create_location()
    store = await adapter.open_store(location)
    queue = store.queue(QUEUE)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, jobs, FILL_BATCH):
            await queue.enqueue_many([dict(MEM_PAYLOAD) for _ in range(min(FILL_BATCH, jobs - start))])
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        await store.close()
        await adapter.drop_location(location)
    return (after - before) / jobs


# The timed figures: one segment returns the work it did and the seconds that took.


TIMERS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
"""``--timer``: wall-clock seconds, or this process's CPU seconds (every thread: aiosqlite's too).

On a shared machine the CPU time of mem and SQLite, whose work is all in this
process, moves far less with other people's load than the wall clock does;
Postgres does its work in the server, so its figures need the wall clock.
"""


class FullCollections:
    """The time the cyclic garbage collector's full (generation 2) collections took, by ``gc.callbacks``.

    A full collection visits every object the process tracks, so in one process
    holding every queue of a run (a million jobs on mem) it takes about half a
    second, and it comes when enough objects have piled up since the last one:
    each run allocates the same way, so it tends to land in the same figure's
    window run after run. Its cost is the whole process's, not that figure's
    queue's; the report shows how much of each window it took (``_gc_table``).
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.seconds = 0.0
        self._started: float | None = None

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = self.clock()
        elif self._started is not None:
            self.seconds += self.clock() - self._started
            self._started = None


FULL_COLLECTIONS = FullCollections(time.perf_counter)


async def _time(work: Callable[[], Awaitable[int]], timer: str) -> tuple[int, float, float]:
    """(work done, seconds, seconds of them in full collections), both by the ``--timer`` clock (``measure``)."""
    clock = TIMERS[timer]
    in_gc = FULL_COLLECTIONS.seconds
    started = clock()
    done = await work()
    return done, clock() - started, FULL_COLLECTIONS.seconds - in_gc


async def _top_up(scene: Scene, target: int) -> None:
    missing = target - len(scene.ready)
    if missing > 0:
        await _fill(scene, missing)


async def run_figure(scene: Scene, name: str, args: argparse.Namespace) -> tuple[int, float, float]:
    """One timed segment of figure ``name`` on ``scene``: (work done, seconds, of them in full collections).

    Claims leave the backlog as it was.
    """
    queue = scene.queue
    if name == "enqueue":

        async def work() -> int:
            for n in range(args.ops):
                scene.ready.append(await queue.enqueue(payload(n)))
            return args.ops

    elif name == "enqueue_many":

        async def work() -> int:
            for call in range(args.batch_calls):
                scene.ready.extend(await queue.enqueue_many([payload(call * BATCH + k) for k in range(BATCH)]))
            return args.batch_calls * BATCH

    elif name == "claim_one+ack":
        await _top_up(scene, scene.size + args.ops)

        async def work() -> int:
            for _ in range(args.ops):
                handle = await queue.claim_one("w")
                if handle is None or not await handle.ack():
                    raise RuntimeError(f"{scene.label}: claim_one+ack found no job or could not ack it")
            return args.ops

    elif name == "claim_batch+ack_batch":
        await _top_up(scene, scene.size + args.batch_calls * BATCH)

        async def work() -> int:
            for _ in range(args.batch_calls):
                handles = await queue.claim_batch("w", BATCH)
                if await queue.ack_batch([handle.job.id for handle in handles]) != BATCH:
                    raise RuntimeError(f"{scene.label}: claim_batch+ack_batch did not get {BATCH} jobs through")
            return args.batch_calls * BATCH

    elif name == GET_JOB:
        ids = random.sample(list(scene.ready), min(args.ops, len(scene.ready)))

        async def work() -> int:
            for job_id in ids:
                if await queue.get_job(job_id) is None:
                    raise RuntimeError(f"{scene.label}: get_job({job_id!r}) found nothing")
            return len(ids)

    elif name == SWEEP:
        await queue.enqueue_many([payload(n) for n in range(args.moved)], expires=EXPIRES)
        scene.clock.advance(PAST_EXPIRY)

        async def work() -> int:
            if (moved := await queue.sweep_expired()) != args.moved:
                raise RuntimeError(f"{scene.label}: sweep_expired moved {moved}, not {args.moved}")
            return 1

    elif name == PURGE:
        await _kill_expiring(scene, args.moved, QueueOpts(dead_letter_retention_s=SHORT_RETENTION))
        scene.clock.advance(SHORT_RETENTION)
        adapter = load_adapter(scene.engine)
        stored = await adapter.count_stored_jobs(scene.location)

        async def work() -> int:
            if (moved := await queue.sweep_expired()) != 0:
                raise RuntimeError(f"{scene.label}: a purge-only sweep reported {moved} jobs moved")
            return 1

        timed = await _time(work, args.timer)
        if (left := await adapter.count_stored_jobs(scene.location)) != stored - args.moved:
            raise RuntimeError(f"{scene.label}: the sweep left {left} of {stored} jobs, not {stored - args.moved}")
        return timed
    else:
        raise ValueError(f"unknown figure {name!r}")
    timed = await _time(work, args.timer)
    if name.startswith("claim"):
        taken = args.ops if name == "claim_one+ack" else args.batch_calls * BATCH
        for _ in range(taken):
            scene.ready.popleft()
    return timed


async def build(engine: str, args: argparse.Namespace) -> list[Scene]:
    """Every queue of one engine, built (untimed) before any figure is timed."""
    scenes: list[Scene] = []
    base = args.backlogs[0]
    for backlog in args.backlogs:
        scene = await _open(engine, f"backlog {_count(backlog)}", "backlog", backlog)
        _progress(f"{engine}: filling {scene.label}")
        await _fill(scene, backlog)
        scenes.append(scene)
    for kind, retry in (("churn", False), ("retry-churn", True)):
        jobs = args.churn if not retry else args.retry_churn
        if jobs <= 0:
            continue
        what = "acked" if not retry else "retried once, acked"
        scene = await _open(engine, f"{_count(base)} after {_count(jobs)} {what}", kind, base)
        _progress(f"{engine}: churning {jobs:,} jobs ({what}) through a queue")
        started = time.perf_counter()
        await _churn(scene, jobs, retry=retry)
        _progress(f"{engine}: churn of {jobs:,} took {time.perf_counter() - started:,.0f} s")
        await _fill(scene, base)
        scenes.append(scene)
    for kept in (base, args.kept) if PURGE in args.figures else ():
        scene = await _open(engine, f"{_count(kept)} dead kept", "kept", kept)
        _progress(f"{engine}: {scene.label}")
        await _kill_expiring(scene, kept, QueueOpts(dead_letter_retention_s=KEEP_RETENTION))
        scenes.append(scene)
    for scene in scenes:
        on_disk = await bytes_on_disk(engine, scene.location)
        scene.bytes_per_job = None if on_disk is None else on_disk / scene.size
    return scenes


def figures_of(scene: Scene, chosen: list[str]) -> tuple[str, ...]:
    every = (PURGE,) if scene.kind == "kept" else FIGURES if scene.kind == "backlog" else PATHS
    return tuple(name for name in every if name in chosen)


async def measure(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    loads = [os.getloadavg()]
    scenes = await build(engine, args)
    FULL_COLLECTIONS.clock = TIMERS[args.timer]
    gc.callbacks.append(FULL_COLLECTIONS)
    try:
        for run in range(args.runs):
            for scene in scenes:
                for name in figures_of(scene, args.figures):
                    done, seconds, in_gc = 0, 0.0, 0.0
                    for _ in range(args.segments):
                        work, took, collecting = await run_figure(scene, name, args)
                        done, seconds, in_gc = done + work, seconds + took, in_gc + collecting
                    rate = done / seconds
                    scene.figure(name).rates.append(rate)
                    scene.figure(name).full_gc_shares.append(in_gc / seconds)
                    _progress(f"run {run + 1}/{args.runs} {engine:8} {scene.label:28} {name:24} {rate:>12,.1f}/s")
    finally:
        gc.callbacks.remove(FULL_COLLECTIONS)
        for scene in scenes:
            await scene.store.close()
            await load_adapter(engine).drop_location(scene.location)
    loads.append(os.getloadavg())
    result: dict[str, Any] = {
        "engine": engine,
        "timer": args.timer,
        "load_average_1_5_15": {"start": loads[0], "end": loads[-1]},
        "scenes": [
            {
                "label": scene.label,
                "kind": scene.kind,
                "size": scene.size,
                "bytes_per_job_on_disk": scene.bytes_per_job,
                "figures": {
                    name: {"median": f.median, "runs": f.rates, "full_gc_shares": f.full_gc_shares}
                    for name, f in scene.figures.items()
                },
            }
            for scene in scenes
        ],
    }
    if engine == "mem":
        result["mem_bytes_per_job"] = {
            str(jobs): await mem_bytes_per_job(jobs) for jobs in sorted({*args.backlogs, args.kept})
        }
    return result


# Reporting.


def _ratio(figure: dict[str, Any], base: dict[str, Any]) -> str:
    """The ratio of medians, then the lowest and highest ratio of one run to the same run's base."""
    per_run = [rate / base_rate for rate, base_rate in zip(figure["runs"], base["runs"], strict=True)]
    spread = f" ({min(per_run):.2f}–{max(per_run):.2f})" if len(per_run) > 1 else ""
    return f"{figure['median'] / base['median']:.2f}×{spread}"


def _column(scene: dict[str, Any]) -> str:
    """A column's title, the same for every engine: churn sizes may differ per engine (see ``_churns``)."""
    return {"churn": "after churn (acked)", "retry-churn": "after churn (retried once)"}.get(
        scene["kind"], scene["label"]
    )


def _churns(results: list[dict[str, Any]]) -> str:
    scenes = [(r["engine"], s["label"]) for r in results for s in r["scenes"] if s["kind"] in ("churn", "retry-churn")]
    return "Churns: " + "; ".join(f"{engine}: {label}" for engine, label in scenes) + "."


def _ratio_table(results: list[dict[str, Any]]) -> str:
    """Rows engine × figure; columns the scenes; the first fresh backlog in absolute terms, the rest as ratios.

    Each ratio is the median's, followed by the range of the per-run ratios (run i ÷ the base's run i): on a
    shared machine that range says how far to trust it.
    """
    lines: list[str] = []
    for result in results:
        scenes = [s for s in result["scenes"] if s["kind"] != "kept"]
        kept = [s for s in result["scenes"] if s["kind"] == "kept"]
        base = scenes[0]
        header = ["engine", "figure", f"{base['label']} (per s)", *(_column(s) for s in scenes[1:])]
        if not lines:
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|---|---|" + "--:|" * (len(header) - 2))
        for name in (name for name in FIGURES if name in base["figures"]):
            cells = [result["engine"], name, f"{base['figures'][name]['median']:,.1f}"]
            for scene in scenes[1:]:
                figure = scene["figures"].get(name)
                cells.append("—" if figure is None else _ratio(figure, base["figures"][name]))
            lines.append("| " + " | ".join(cells) + " |")
        if not kept:
            continue
        base_kept = kept[0]["figures"][PURGE]
        purge = [result["engine"], f"{PURGE} among dead kept", f"{base_kept['median']:,.1f}"]
        purge.append(", ".join(f"{s['label']}: {_ratio(s['figures'][PURGE], base_kept)}" for s in kept[1:]))
        lines.append("| " + " | ".join(purge) + " |" + " |" * (len(header) - len(purge)))
    return "\n".join(lines)


GC_SHOWN = 0.05
"""A figure whose full collections took at least this share of some run's timed seconds is in ``_gc_table``."""


def _without_gc(figure: dict[str, Any]) -> float:
    """The median rate had the full collections in its windows taken no time (rate ÷ (1 − their share))."""
    shares = figure.get("full_gc_shares") or [0.0] * len(figure["runs"])
    return float(statistics.median(rate / (1 - share) for rate, share in zip(figure["runs"], shares, strict=True)))


def _gc_table(results: list[dict[str, Any]]) -> str:
    """The figures a full collection landed in, with their ratio to the base had no collection taken time.

    A run from before this accounting (no ``full_gc_shares`` in its JSON) has no such table.
    """
    lines: list[str] = []
    for result in results:
        scenes = [s for s in result["scenes"] if s["kind"] != "kept"]
        base = scenes[0]["figures"]
        for scene in result["scenes"]:
            for name, figure in scene["figures"].items():
                shares = figure.get("full_gc_shares") or []
                if not shares or max(shares) < GC_SHOWN:
                    continue
                base_figure = base.get(name) if scene["kind"] != "kept" else None
                without = "—" if base_figure is None else f"{_without_gc(figure) / _without_gc(base_figure):.2f}×"
                shown = ", ".join(f"{share:.0%}" for share in shares)
                lines.append(f"| {result['engine']} | {scene['label']} | {name} | {shown} | {without} |")
    if not lines:
        return ""
    header = [
        "Full collections of the cyclic garbage collector in the timed windows (see `FullCollections`):",
        "",
        "| engine | queue | figure | share of each run's time | ratio to the base, both without them |",
        "|---|---|---|---|--:|",
    ]
    return "\n".join([*header, *lines])


def _storage_table(results: list[dict[str, Any]]) -> str:
    lines = ["| engine | storage per job | fresh backlogs | after churns |", "|---|---|---|---|"]
    for result in results:
        if result["engine"] == "mem":
            shown = ", ".join(f"{_count(int(n))} jobs: {b:,.0f} B" for n, b in result["mem_bytes_per_job"].items())
            lines.append(f"| mem | tracemalloc, 100-byte payload | {shown} | — |")
            continue
        fresh = [s for s in result["scenes"] if s["kind"] == "backlog"]
        churned = [s for s in result["scenes"] if s["kind"] in ("churn", "retry-churn")]
        lines.append(
            f"| {result['engine']} | bytes on disk (table + indexes) | "
            + ", ".join(f"{_count(s['size'])}: {s['bytes_per_job_on_disk']:,.0f} B" for s in fresh)
            + " | "
            + ", ".join(f"{s['label']}: {s['bytes_per_job_on_disk']:,.0f} B" for s in churned)
            + " |"
        )
    return "\n".join(lines)


def draw(results: list[dict[str, Any]], path: Path, title: str) -> None:
    """Per engine: each figure's ratio to the smallest fresh backlog, against the backlog and after each churn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(results), 2, figsize=(13, 3.8 * len(results)), squeeze=False)
    for (left, right), result in zip(axes, results, strict=True):
        backlogs = [s for s in result["scenes"] if s["kind"] == "backlog"]
        churned = [backlogs[0], *(s for s in result["scenes"] if s["kind"] in ("churn", "retry-churn"))]
        for name in (name for name in FIGURES if name in backlogs[0]["figures"]):
            base = backlogs[0]["figures"][name]["median"]
            left.plot(
                [s["size"] for s in backlogs], [s["figures"][name]["median"] / base for s in backlogs], "o-", label=name
            )
            if name in PATHS:
                right.plot(
                    range(len(churned)), [s["figures"][name]["median"] / base for s in churned], "o-", label=name
                )
        left.set_xscale("log")
        left.set_xticks([s["size"] for s in backlogs], [_count(s["size"]) for s in backlogs])
        left.minorticks_off()
        left.set_xlabel("backlog (jobs)")
        right.set_xticks(range(len(churned)), ["fresh", *(s["label"] for s in churned[1:])], fontsize=8)
        for axis, what in ((left, "against backlog"), (right, "after churn, same backlog")):
            axis.axhline(0.8, color="grey", linestyle=":", linewidth=1)
            axis.set_ylim(bottom=0)
            axis.set_ylabel("rate ÷ fresh smallest backlog")
            axis.set_title(f"{result['engine']}: {what}")
            axis.grid(alpha=0.3)
            axis.legend(fontsize=7)
    figure.suptitle(textwrap.fill(title, 170), fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


async def main(args: argparse.Namespace) -> int:
    os.environ[DSN_ENV] = args.dsn
    started = time.perf_counter()
    date = datetime.now(UTC).isoformat(timespec="seconds")
    results: list[dict[str, Any]] = []
    command = " ".join([Path(sys.executable).name, *sys.argv])
    meta: dict[str, Any] = {
        "command": command,
        "date": date,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "sizes": {
            "backlogs": args.backlogs,
            "churn": args.churn,
            "retry_churn": args.retry_churn,
            "kept": args.kept,
            "moved": args.moved,
            "ops": args.ops,
            "batch_calls": args.batch_calls,
            "runs": args.runs,
            "segments": args.segments,
        },
        "timer": args.timer,
    }
    for engine in args.engines:
        if engine == "postgres" and (reason := await load_adapter("postgres").unavailable_reason()) is not None:
            _progress(f"postgres skipped: {reason}")
            continue
        results.append(await measure(engine, args))
        if args.json is not None:
            # Written after every engine, so a long run that is stopped keeps what it measured.
            args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    meta["seconds"] = round(time.perf_counter() - started, 1)
    if args.json is not None:
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    render(meta, results, args.png)
    return 0


def render(meta: dict[str, Any], results: list[dict[str, Any]], png: Path | None) -> None:
    """The tables on stdout and, with ``png``, the plot: from a run just made, or from its JSON (``--report``)."""
    command, date, runs = meta["command"], meta["date"], meta["sizes"]["runs"]
    out = sys.stdout
    timers = ", ".join(f"{r['engine']} {r.get('timer', meta.get('timer', 'wall'))} time" for r in results)
    loads = ", ".join(
        f"{r['engine']} {r['load_average_1_5_15']['start'][0]:.1f}→{r['load_average_1_5_15']['end'][0]:.1f}"
        for r in results
    )
    out.write(
        f"alkstore scale: {meta['machine']['cpus']} CPUs, Python {meta['machine']['python']}; {date}; "
        f"median of {runs} runs; timed by {timers}; load average (1 min) {loads}\n`{command}`\n\n"
    )
    out.write(_ratio_table(results) + "\n\n" + _churns(results) + "\n\n" + _storage_table(results) + "\n")
    if gc_table := _gc_table(results):
        out.write("\n" + gc_table + "\n")
    if png is not None:
        draw(results, png, f"alkstore scale — {command} — {date}")


def _sizes(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINE_ORDER), help="comma-separated engines")
    parser.add_argument("--backlogs", default="10000,100000,1000000", help="fresh backlogs; the first is the base")
    parser.add_argument("--max-backlog", type=int, help="leave out larger backlogs; also caps the churns' default")
    parser.add_argument("--churn", type=int, help="jobs acked through a queue first (default: the largest backlog)")
    parser.add_argument("--retry-churn", type=int, help="jobs retried once then acked (default: --churn)")
    parser.add_argument("--kept", type=int, default=100_000, help="dead jobs kept around the purge (default 100000)")
    parser.add_argument("--moved", type=int, default=1_000, help="jobs each sweep expires or purges (default 1000)")
    parser.add_argument("--ops", type=int, default=1_000, help="calls per run of enqueue, claim_one, get_job")
    parser.add_argument("--batch-calls", type=int, default=50, help="calls of 100 jobs per run of the batch paths")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per figure; the median is reported")
    parser.add_argument(
        "--segments",
        type=int,
        default=1,
        help="timed segments per run, each prepared as the first (claims: backlog topped up; sweeps: jobs to move); "
        "lengthens the timed window of fast engines without growing the backlog a claim starts from",
    )
    parser.add_argument(
        "--figures",
        default=",".join((*FIGURES, PURGE)),
        help="comma-separated figures to time (a reduced run); leaving out the purge skips its dead-kept queues",
    )
    parser.add_argument(
        "--timer",
        choices=sorted(TIMERS),
        default="wall",
        help="time each figure by the wall clock (default) or by this process's CPU time (mem, sqlite)",
    )
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV, DEFAULT_DSN), help="Postgres DSN")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test that runs in seconds")
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    parser.add_argument("--png", type=Path, help="draw the plot here (PNG)")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        help="measure nothing: print the tables (and --png) of these JSON files, their engines side by side",
    )
    args = parser.parse_args(argv)
    args.engines = [name for name in args.engines.split(",") if name]
    args.figures = [name for name in args.figures.split(",") if name]
    if unknown := [f for f in args.figures if f not in (*FIGURES, PURGE)]:
        parser.error(f"unknown figures: {', '.join(unknown)}; known: {', '.join((*FIGURES, PURGE))}")
    if unknown := [e for e in args.engines if e not in ENGINE_ORDER]:
        parser.error(f"unknown engines: {', '.join(unknown)}")
    if args.quick:
        args.backlogs, args.kept, args.moved, args.ops, args.batch_calls, args.runs = "200,1000", 1000, 50, 20, 2, 1
    args.backlogs = _sizes(args.backlogs) if isinstance(args.backlogs, str) else args.backlogs
    if args.max_backlog is not None:
        args.backlogs = [b for b in args.backlogs if b <= args.max_backlog] or [args.max_backlog]
    args.kept = min(args.kept, max(args.backlogs)) if args.max_backlog is not None else args.kept
    args.churn = max(args.backlogs) if args.churn is None else args.churn
    args.retry_churn = args.churn if args.retry_churn is None else args.retry_churn
    if sorted(args.backlogs) != args.backlogs or not args.backlogs or args.backlogs[0] < 1:
        parser.error(f"--backlogs must be increasing positive sizes, got {args.backlogs}")
    return args


def entry(args: argparse.Namespace) -> int:
    if args.report is not None:
        documents = [json.loads(path.read_text()) for path in args.report]
        for document in documents:
            for result in document["results"]:
                result.setdefault("timer", document["meta"].get("timer", "wall"))
        meta = dict(documents[0]["meta"])
        meta["command"] = " ; ".join(document["meta"]["command"] for document in documents)
        meta["date"] = " ; ".join(document["meta"]["date"] for document in documents)
        render(meta, [result for document in documents for result in document["results"]], args.png)
        return 0
    return asyncio.run(main(args))


if __name__ == "__main__":
    sys.exit(entry(parse()))
