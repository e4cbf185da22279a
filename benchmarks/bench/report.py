"""The benchmark's output: a Markdown table, the ratios against the targets, JSON, and a bar chart.

The Postgres targets: every path at least 0.9x the bare asyncpg driver with 1 and 4 workers, ``enqueue_many``
at least 2x pgqueuer's, and the 4-worker ``claim_batch`` + ``ack_batch`` at least 4x pgqueuer's best consume.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.model import PATHS, Series

ALKSTORE = "alkstore"
AIOSQLITE = "aiosqlite (raw)"
STDLIB = "sqlite3 (raw)"
ASYNCPG = "asyncpg (raw)"
PGQUEUER = "pgqueuer"
PROCRASTINATE = "procrastinate"
CONSUME = "consume"
"""A peer's path for draining a backlog with its own worker loop (compared with claim_batch+ack_batch)."""

ENGINE_ORDER = ("sqlite", "postgres", "mem")
PATH_ORDER = (*PATHS, CONSUME)


@dataclass(frozen=True, slots=True)
class Target:
    """A target: alkstore's rate on a row, divided by a reference's, at least ``at_least`` (or jobs/s)."""

    engine: str
    path: str
    workers: int
    reference: str | None
    """The implementation divided by (its best series on ``reference_path``), or ``None`` for jobs/s."""
    at_least: float
    reference_path: str | None = None

    @property
    def label(self) -> str:
        row = f"{self.engine} {self.path}, {self.workers} worker{'s' if self.workers > 1 else ''}"
        if self.reference is None:
            return f"{row} ≥ {self.at_least:,.0f} jobs/s"
        against = self.reference if self.reference_path in (None, self.path) else f"{self.reference} {CONSUME}"
        return f"{row} ≥ {self.at_least:g}× {against}"


TARGETS = (
    Target("sqlite", "enqueue_many", 1, AIOSQLITE, 0.8),
    Target("sqlite", "claim_batch+ack_batch", 1, AIOSQLITE, 0.8),
    Target("sqlite", "claim_one+ack", 1, AIOSQLITE, 1.0),
    Target("sqlite", "claim_one+ack", 4, AIOSQLITE, 1.0),
    Target("sqlite", "claim_one+ack", 4, STDLIB, 0.5),
    *(Target("postgres", path, workers, ASYNCPG, 0.9) for path in PATHS for workers in (1, 4)),
    Target("postgres", "enqueue_many", 1, PGQUEUER, 2.0),
    Target("postgres", "enqueue_many", 4, PGQUEUER, 2.0),
    Target("postgres", "claim_batch+ack_batch", 4, PGQUEUER, 4.0, reference_path=CONSUME),
    Target("mem", "claim_one+ack", 1, None, 100_000),
    Target("mem", "claim_batch+ack_batch", 1, None, 100_000),
)


def _sort_key(series: Series) -> tuple[int, int, int, str]:
    return (ENGINE_ORDER.index(series.engine), PATH_ORDER.index(series.path), series.workers, series.impl)


def find(series: Iterable[Series], engine: str, impl: str, path: str, workers: int | None) -> Series | None:
    """The best (highest median) series of ``impl`` on that row; ``workers=None`` takes any worker count.

    A peer's consume series carry their knob in ``impl`` ("pgqueuer (batch_size=100)"), so the
    prefix matches: the best setting of the peer is the one compared.
    """
    matches = [
        s
        for s in series
        if s.engine == engine
        and s.path == path
        and (workers is None or s.workers == workers)
        and (s.impl == impl or s.impl.startswith(f"{impl} ("))
        and s.samples
    ]
    return max(matches, key=lambda s: s.median, default=None)


def evaluate(series: list[Series], target: Target) -> tuple[float | None, bool | None]:
    """The measured value of ``target`` (a ratio, or jobs/s) and whether it is met; ``None`` if not measured."""
    ours = find(series, target.engine, ALKSTORE, target.path, target.workers)
    if ours is None:
        return None, None
    if target.reference is None:
        return ours.median, ours.median >= target.at_least
    reference_path = target.reference_path or target.path
    # The stdlib baseline runs with one worker only: it is the ceiling of the file, whatever the workers.
    reference_workers = None if target.reference == STDLIB else target.workers
    theirs = find(series, target.engine, target.reference, reference_path, reference_workers)
    if theirs is None:
        return None, None
    ratio = ours.median / theirs.median
    return ratio, ratio >= target.at_least


def _us(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value / 1000:,.1f} ms" if value >= 10_000 else f"{value:,.0f} µs"


def _per_job(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def results_table(series: list[Series]) -> str:
    """Every series, one row each, in engine / path / workers order."""
    lines = [
        "| engine | path | workers | implementation | jobs/s (median) | min–max | p50 op | p99 op "
        "| statements/job | round trips/job | alkstore ÷ this |",
        "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for s in sorted(series, key=_sort_key):
        if not s.samples:
            continue
        latency = (_us(s.latency_us(0.5)), _us(s.latency_us(0.99)))
        ratio = ""
        if s.impl != ALKSTORE:
            compared_path = "claim_batch+ack_batch" if s.path == CONSUME else s.path
            ours = find(series, s.engine, ALKSTORE, compared_path, s.workers)
            if ours is not None:
                ratio = f"{ours.median / s.median:.2f}×"
        counts = s.counts
        name = s.impl if not s.note else f"{s.impl} ¹"
        lines.append(
            f"| {s.engine} | {s.path} | {s.workers} | {name} | {s.median:,.0f} | {s.low:,.0f}–{s.high:,.0f} "
            f"| {latency[0]} | {latency[1]} "
            f"| {_per_job(None if counts is None else counts.statements_per_job)} "
            f"| {_per_job(None if counts is None else counts.round_trips_per_job)} | {ratio} |"
        )
    notes = sorted({s.note for s in series if s.note})
    lines.extend(["", *(f"¹ {note}" for note in notes)] if notes else [])
    return "\n".join(lines)


def targets_table(series: list[Series]) -> str:
    lines = ["| target | measured | met |", "|---|--:|:-:|"]
    for target in TARGETS:
        value, met = evaluate(series, target)
        if value is None:
            shown, verdict = "not measured", "—"
        elif target.reference is None:
            shown, verdict = f"{value:,.0f} jobs/s", "yes" if met else "**no**"
        else:
            shown, verdict = f"{value:.2f}×", "yes" if met else "**no**"
        lines.append(f"| {target.label} | {shown} | {verdict} |")
    return "\n".join(lines)


def as_json(series: list[Series], meta: dict[str, Any]) -> str:
    targets = []
    for target in TARGETS:
        value, met = evaluate(series, target)
        targets.append({"target": target.label, "measured": value, "met": met})
    document = {
        "meta": meta,
        "series": [s.as_json() for s in sorted(series, key=_sort_key) if s.samples],
        "targets": targets,
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def draw(series: list[Series], path: Path, title: str) -> None:
    """A bar chart per engine: jobs/s (median, log scale, min–max whiskers) per path and worker count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    engines = [engine for engine in ENGINE_ORDER if any(s.engine == engine and s.samples for s in series)]
    figure, axes = plt.subplots(len(engines), 1, figsize=(13, 4.2 * len(engines)), squeeze=False)
    for axis, engine in zip(axes[:, 0], engines, strict=True):
        rows = sorted((s for s in series if s.engine == engine and s.samples), key=_sort_key)
        groups = sorted({(s.path, s.workers) for s in rows}, key=lambda g: (PATH_ORDER.index(g[0]), g[1]))
        impls = sorted({s.impl for s in rows}, key=lambda impl: (impl != ALKSTORE, impl))
        width = 0.8 / len(impls)
        for index, impl in enumerate(impls):
            xs, heights, low, high = [], [], [], []
            for position, (path_name, workers) in enumerate(groups):
                match = next((s for s in rows if s.impl == impl and s.path == path_name and s.workers == workers), None)
                if match is None:
                    continue
                xs.append(position - 0.4 + width * (index + 0.5))
                heights.append(match.median)
                low.append(match.median - match.low)
                high.append(match.high - match.median)
            axis.bar(xs, heights, width, label=impl, yerr=[low, high], capsize=2)
        labels = ["\n".join([*p.replace("+", "+ ").split(" "), f"{w} worker{'s' if w > 1 else ''}"]) for p, w in groups]
        axis.set_xticks(range(len(groups)), labels, fontsize=8)
        axis.set_yscale("log")
        axis.set_ylabel("jobs/s (median; whiskers min–max)")
        axis.set_title(engine)
        axis.grid(axis="y", which="both", alpha=0.3)
        axis.legend(fontsize=7, ncols=3)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
