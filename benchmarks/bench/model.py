"""What one benchmark measures: samples of one run, series of runs, and their statistics."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PATHS = ("enqueue", "enqueue_many", "claim_one+ack", "claim_batch+ack_batch")
"""Every path, in table order. A path's "op" is one iteration of its worker loop (see workload.py)."""

BATCH = 100
"""Jobs per ``enqueue_many`` call and per ``claim_batch``."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One timed run of one path: how many jobs in how long, each op's latency, and of how many repeats.

    A run repeated (``joined``) counts every repeat's jobs over every repeat's
    timed seconds, so its jobs/s means what a single run's does.
    """

    jobs: int
    seconds: float
    latencies_us: tuple[float, ...]
    repeats: int = 1

    @property
    def rate(self) -> float:
        return self.jobs / self.seconds

    @classmethod
    def joined(cls, samples: Sequence[Sample]) -> Sample:
        """The repeats of one run as one sample: their jobs and timed seconds added, their latencies pooled."""
        return cls(
            jobs=sum(sample.jobs for sample in samples),
            seconds=sum(sample.seconds for sample in samples),
            latencies_us=tuple(latency for sample in samples for latency in sample.latencies_us),
            repeats=sum(sample.repeats for sample in samples),
        )


@dataclass(frozen=True, slots=True)
class Counts:
    """Statements and round trips (thread hops on SQLite) of one counting run, per job."""

    statements_per_job: float
    round_trips_per_job: float


@dataclass(slots=True)
class Series:
    """Every run of one (engine, implementation, path, workers) row of the table."""

    engine: str
    impl: str
    path: str
    workers: int
    note: str = ""
    samples: list[Sample] = field(default_factory=list)
    counts: Counts | None = None

    @property
    def median(self) -> float:
        return statistics.median(sample.rate for sample in self.samples)

    @property
    def low(self) -> float:
        return min(sample.rate for sample in self.samples)

    @property
    def high(self) -> float:
        return max(sample.rate for sample in self.samples)

    def latency_us(self, quantile: float) -> float | None:
        """The ``quantile`` of every op's latency across all runs (0.5 = p50, 0.99 = p99); ``None`` if untimed."""
        ordered = sorted(latency for sample in self.samples for latency in sample.latencies_us)
        if not ordered:
            return None
        return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]

    def as_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "impl": self.impl,
            "path": self.path,
            "workers": self.workers,
            "note": self.note,
            "jobs_per_s": {"median": self.median, "min": self.low, "max": self.high},
            "runs": [
                {"jobs": s.jobs, "seconds": s.seconds, "jobs_per_s": s.rate, "repeats": s.repeats} for s in self.samples
            ],
            "latency_us": {"p50": self.latency_us(0.5), "p99": self.latency_us(0.99)},
            "statements_per_job": None if self.counts is None else self.counts.statements_per_job,
            "round_trips_per_job": None if self.counts is None else self.counts.round_trips_per_job,
        }
