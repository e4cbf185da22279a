"""The checker: what happened to each job, read from the ledger's runs, the nemesis's fault log, and what the
library itself holds for each job at the end (``inspect``, protocol 2).

Pure: it takes the runs, the faults, the jobs, when each worker died and the library's final states, and returns
findings; nothing here knows which library ran. The outcomes are docs/runtime-faults.md's "The checker": a job
that never completed is classed by the library's own final state (``lost``, ``failed_by_policy``,
``failed_unexplained``, ``recovers_later``, ``still_queued``, or ``unread`` when that state was not read);
``twice``; an overlap of two runs, split by whether both were executing (``concurrent_executing``) or one was
stopped by the harness (``concurrent_stopped``); the late completions split by what the library did with them
(``stale_accepted``, ``stale_refused``, ``stale_unobserved``); the runs the library cancelled (``cancelled``);
and the recovery delay of every run a fault interrupted.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alkstore_contract.hazards import Hazard
from alkstore_faults.handler_records import Run

STALE = tuple(f"{Hazard.STALE}_{seen}" for seen in ("accepted", "refused", "unobserved"))
"""A late completion (a run ended ok after another worker had started the job), by the ``accepted`` of its
``ack`` record: the library took it, refused it, or the runner could not see which."""
NOT_COMPLETED = (
    Hazard.LOST.value,
    "failed_by_policy",
    "failed_unexplained",
    "recovers_later",
    "still_queued",
    "unread",
)
"""A job meant to succeed that no run completed, by what the library holds for it at the end of the run."""
CONCURRENT = tuple(f"{Hazard.CONCURRENT}_{how}" for how in ("executing", "stopped"))
"""Two runs of a job on two workers overlapping: while both executed, or only while the harness had one stopped."""
OUTCOMES = (*NOT_COMPLETED, Hazard.TWICE.value, *CONCURRENT, *STALE, "cancelled")
"""Every count of a run, named by the hazard (``alkstore_contract.hazards``) each splits, and ``cancelled``."""
State = dict[str, Any]
"""What ``inspect`` said of one job (alkstore_faults.runner_program.parse_states)."""


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
    cause: str | None = None
    """For ``failed_by_policy`` the setting, for ``recovers_later`` when the documented rule recovers it: what
    the results table shows beside the count."""

    def as_json(self) -> dict[str, Any]:
        found = {
            "outcome": self.outcome,
            "job": self.job,
            "workers": self.workers,
            "times": [round(t, 3) for t in self.times],
            "detail": self.detail,
        }
        return found if self.cause is None else {**found, "cause": self.cause}


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


@dataclass(frozen=True)
class Library:
    """What the library said at the end of the run (``states``: ``None`` for a version-1 runner, which has no
    ``inspect``), and the runner's declared ``policies`` and ``recovery_rules`` that explain those states."""

    states: dict[str, State] | None = None
    policies: Sequence[dict[str, Any]] = ()
    recovery_rules: Sequence[dict[str, Any]] = ()
    finished_wall: float = 0.0
    """When the run ended, wall clock (epoch seconds): the time ``inspect``'s ``until`` is compared with."""


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _after(seconds: float | None) -> str:
    if seconds is None:
        return "a documented rule (no fixed time)"
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


def not_completed(state: State | None, library: Library) -> tuple[str, str, str | None]:
    """The class of a job meant to succeed that no run completed, why, and the cause the table shows (a policy's
    setting, a recovery rule's delay), by the library's own final state."""
    if state is None or state["state"] == "unknown":
        why = "the runner has no inspect (protocol 1)" if state is None else f"inspect: {state.get('reason')}"
        return "unread", f"final state not read: {why}", None
    kind, said = state["state"], f"the library says {state['state']} ({state.get('library_state')})"
    until = state.get("until")
    if kind == "absent":
        return "lost", f"{said}: it has no record of the job", None
    if kind == "completed":
        return "lost", f"{said}, yet no run of it ended ok: the library marked done a run that never finished", None
    if kind == "queued":
        return "still_queued", f"{said}: ready to run, not run within the run", None
    if kind in ("failed", "dead"):
        reason = str(state.get("reason") or "")
        for policy in library.policies:
            if policy["state"] == kind and str(policy["reason"]) in reason:
                why = f"{said}, reason {reason!r}: by {policy['setting']} ({policy['doc']})"
                return "failed_by_policy", why, str(policy["setting"])
        return "failed_unexplained", f"{said}, reason {reason!r}: no declared policy explains it", reason or None
    if kind == "scheduled" and until is not None and until <= library.finished_wall:
        return "still_queued", f"{said}: due at {_when(until)}, before the run ended; not run within it", None
    if kind == "running" and until is not None and until <= library.finished_wall:
        return (
            "still_queued",
            f"{said}: its hold lapsed at {_when(until)}, before the run ended; not run within it",
            None,
        )
    rules = [rule for rule in library.recovery_rules if rule["state"] == kind]
    # ``until`` null is the protocol's "never, by any documented rule": no declared rule covers that hold.
    if not rules or (kind == "running" and until is None):
        held = "forever" if until is None else f"until {_when(until)}"
        return "lost", f"{said}, held {held}, and no documented recovery rule runs it again", None
    rule = rules[0]
    held = f"; the library holds it until {_when(until)}" if until is not None else ""
    after = _after(rule.get("after_s"))
    why = f"{said}: not recovered within the run; documented to recover after {after} ({rule['rule']}, {rule['doc']})"
    return "recovers_later", why + held, f"documented to recover after {after}"


def overlap_kind(
    first: tuple[str, float, float], second: tuple[str, float, float], faults: Sequence[FaultEvent]
) -> tuple[str, float]:
    """Two overlapping runs, each (worker, start, end): ``concurrent_executing`` when, for part of the overlap,
    neither worker was stopped by the harness; ``concurrent_stopped`` when one of them was stopped all along
    (the stopped process's frozen interval); and the seconds both were executing."""
    start, end = max(first[1], second[1]), min(first[2], second[2])
    both = 0.0
    if end > start:
        stopped = [
            (max(start, fault.at), min(end, fault.until))
            for fault in faults
            if fault.kind == "pause"
            and fault.worker in (first[0], second[0])
            and fault.until > start
            and fault.at < end
        ]
        both = (end - start) - _union(stopped)
    return ("concurrent_executing" if both > 0 else "concurrent_stopped"), both


def _union(intervals: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def check(
    jobs: list[Job],
    runs: list[Run],
    faults: list[FaultEvent],
    deaths: dict[str, float],
    finished: float,
    library: Library | None = None,
) -> Verdict:
    """Judge one run of the workload: ``deaths`` maps a killed worker to when; ``finished`` is when the run ended;
    ``library`` what the library holds at the end (default: not read, a version-1 runner)."""
    library = library or Library()
    findings: list[Finding] = []
    by_job: dict[str, list[Run]] = {job.id: [] for job in jobs}
    for run in runs:
        by_job.setdefault(run.job, []).append(run)
    for job in jobs:
        mine = sorted(by_job[job.id], key=lambda run: run.start)
        completed = [run for run in mine if run.end is not None and run.ok]
        if not job.fail and not completed:
            state = None if library.states is None else library.states.get(job.id)
            outcome, why, cause = not_completed(state, library)
            detail = f"{len(mine)} start(s), none ended ok by {finished:.3f}; {why}"
            workers = sorted({run.worker for run in mine})
            findings.append(Finding(outcome, job.id, workers, [finished], detail, cause))
        for run in mine:
            if run.cancelled is not None and run.end is not None and run.end <= finished:
                findings.append(
                    Finding("cancelled", job.id, [run.worker], [run.start, run.end], f"cancelled by {run.cancelled}")
                )
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
                second_end = _effective_end(second, deaths, finished)
                outcome, both = overlap_kind(
                    (first.worker, first.start, first_end), (second.worker, second.start, second_end), faults
                )
                findings.append(
                    Finding(
                        outcome,
                        job.id,
                        [first.worker, second.worker],
                        [first.start, second.start, first_end],
                        f"{second.worker} started it at {second.start:.3f} while {first.worker}'s run "
                        f"(from {first.start:.3f}) lasted until {first_end:.3f}; both executing {both:.3f} s",
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
