"""The checker: what happened to each job, read from the ledger's runs and the nemesis's fault log.

Pure: it takes the runs, the faults, the jobs and when each worker died, and returns findings; nothing here
knows which library ran. The outcomes are docs/runtime-faults.md's "The checker": ``lost``, ``twice``,
``concurrent``, the late completions split by what the library did with them (``stale_accepted``,
``stale_refused``, ``stale_unobserved``), and the recovery delay of every run a fault interrupted.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from alkstore_faults.ledger import Run

STALE = ("stale_accepted", "stale_refused", "stale_unobserved")
"""A late completion (a run ended ok after another worker had started the job), by the ``accepted`` of its
``ack`` record: the library took it, refused it, or the runner could not see which."""
OUTCOMES = ("lost", "twice", "concurrent", *STALE)


@dataclass(frozen=True)
class Job:
    """One job of the workload: its id, how long its handler sleeps, whether it is told to fail."""

    id: str
    duration_s: float
    fail: bool = False


@dataclass
class FaultEvent:
    """One fault the nemesis injected: its kind, when (monotonic), on which worker, which jobs were in flight."""

    kind: str
    at: float
    until: float
    worker: str | None
    jobs: list[str] = field(default_factory=list)
    detail: str = ""


@dataclass(frozen=True)
class Finding:
    """One broken expectation about one job, with everything needed to find it again."""

    outcome: str
    job: str
    workers: list[str]
    times: list[float]
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "job": self.job,
            "workers": self.workers,
            "times": [round(t, 3) for t in self.times],
            "detail": self.detail,
        }


@dataclass
class Verdict:
    """The checker's answer for one run of the workload under one fault."""

    findings: list[Finding]
    recovery_delays: list[float]
    """Seconds from a fault to the next start of a job it interrupted, one per interrupted job that restarted."""
    unrecovered: list[str]
    """Interrupted jobs that neither started again nor ended after the fault."""

    def count(self, outcome: str) -> int:
        return sum(1 for finding in self.findings if finding.outcome == outcome)


def _effective_end(run: Run, deaths: dict[str, float], finished: float) -> float:
    """When a run stopped holding its job: its end, or its worker's death, or the end of the run of the workload."""
    if run.end is not None:
        return run.end
    return deaths.get(run.worker, finished)


def check(
    jobs: list[Job], runs: list[Run], faults: list[FaultEvent], deaths: dict[str, float], finished: float
) -> Verdict:
    """Judge one run of the workload: ``deaths`` maps a killed worker to when; ``finished`` is when the run ended."""
    findings: list[Finding] = []
    by_job: dict[str, list[Run]] = {job.id: [] for job in jobs}
    for run in runs:
        by_job.setdefault(run.job, []).append(run)
    for job in jobs:
        mine = sorted(by_job[job.id], key=lambda run: run.start)
        completed = [run for run in mine if run.end is not None and run.ok]
        if not job.fail and not completed:
            detail = f"{len(mine)} start(s), none ended ok by {finished:.3f}"
            findings.append(Finding("lost", job.id, sorted({run.worker for run in mine}), [finished], detail))
        if len(completed) > 1:
            findings.append(
                Finding(
                    "twice",
                    job.id,
                    [run.worker for run in completed],
                    [run.end for run in completed if run.end is not None],
                    f"{len(completed)} runs ended ok",
                )
            )
        for index, first in enumerate(mine):
            first_end = _effective_end(first, deaths, finished)
            for second in mine[index + 1 :]:
                if second.worker == first.worker or second.start >= first_end:
                    continue
                findings.append(
                    Finding(
                        "concurrent",
                        job.id,
                        [first.worker, second.worker],
                        [first.start, second.start, first_end],
                        f"{second.worker} started it at {second.start:.3f} while {first.worker}'s run "
                        f"(from {first.start:.3f}) lasted until {first_end:.3f}",
                    )
                )
                if first.ok and first.end is not None:
                    findings.append(_stale(job.id, first, second, first.end))
    delays, unrecovered = _recovery(by_job, faults)
    return Verdict(findings, delays, unrecovered)


def _stale(job: str, first: Run, second: Run, end: float) -> Finding:
    """``first`` ended ok at ``end``, after ``second`` had started the job: which stale outcome, by its ack."""
    if first.accepted is None:
        outcome, fate = "stale_unobserved", "the runner did not see what the library did with it"
    elif first.accepted:
        outcome, fate = "stale_accepted", "and the library accepted the completion"
    else:
        outcome, fate = "stale_refused", "and the library refused the completion"
    return Finding(
        outcome,
        job,
        [first.worker, second.worker],
        [second.start, end],
        f"{first.worker} completed it at {end:.3f}, after {second.worker} was given it at {second.start:.3f}; {fate}",
    )


def _recovery(by_job: dict[str, list[Run]], faults: list[FaultEvent]) -> tuple[list[float], list[str]]:
    """For each job a fault interrupted: the delay from the fault to its next start, or that it never went on.

    A job whose interrupted run itself went on to end after the fault (a paused worker resumed, a connection
    came back) needed no restart: it has no delay and is not unrecovered. One that neither started again nor
    ended after the fault is unrecovered.
    """
    delays: list[float] = []
    unrecovered: list[str] = []
    for fault in faults:
        for job in fault.jobs:
            runs = by_job.get(job, [])
            later = [run.start for run in runs if run.start > fault.at]
            if later:
                delays.append(min(later) - fault.at)
            elif not any(run.end is not None and run.end > fault.at for run in runs):
                unrecovered.append(job)
    return delays, unrecovered


def distribution(values: list[float]) -> dict[str, float | int | None]:
    """The count, min, median and max of a list of delays (``None`` each when it is empty)."""
    if not values:
        return {"n": 0, "min": None, "median": None, "max": None}
    return {
        "n": len(values),
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }
