"""The schedule workload's checker: per tick of the run's window, how many runs of its periodic handler
completed, read from the ledger's runs (each carrying its tick's scheduled time) and the fault log.

Pure, like ``alkstore_faults.checker``: it takes the runs, the window, the intervals when no scheduler ran or the
broker was down, and the library's documented skips, and returns one finding per tick that was not run exactly
once. A tick is run once when exactly one run of it ended ok; ``tick_twice`` when more did (its handler's effect
happened twice: two jobs for one tick, or one job run again); ``tick_missed`` when none did, unless a skip the
library documents covers the tick's time (``tick_skipped``, with the quote). A run interrupted by the fault and
never completed is no run of its tick: the tick is missed unless another run completed it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from alkstore_faults.handler_records import Run

TICK_MATCH_S = 0.001
"""How far a run's ``tick`` may be from a multiple of the period and still be that tick (a float's rounding)."""


@dataclass(frozen=True)
class TickFinding:
    outcome: str
    tick: float
    runs: list[tuple[str, float, float | None, bool | None]]
    """Each run of the tick: worker, start and end (monotonic), ok."""
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "tick": self.tick,
            "runs": [
                [worker, round(start, 3), None if end is None else round(end, 3), ok]
                for worker, start, end, ok in self.runs
            ],
            "detail": self.detail,
        }


@dataclass
class TickVerdict:
    ticks: int
    """How many ticks the window holds."""
    findings: list[TickFinding] = field(default_factory=list)
    off_window: int = 0
    """Runs whose tick lies outside the window (before it, or too late in the run to be judged), not counted."""

    def count(self, outcome: str) -> int:
        return sum(1 for finding in self.findings if finding.outcome == outcome)

    def counts(self) -> dict[str, int]:
        twice, missed, skipped = (self.count(outcome) for outcome in ("tick_twice", "tick_missed", "tick_skipped"))
        return {
            "ticks": self.ticks,
            "tick_once": self.ticks - twice - missed - skipped,
            "tick_twice": twice,
            "tick_missed": missed,
            "tick_skipped": skipped,
        }


def window_ticks(start_wall: float, end_wall: float, every_s: float) -> list[float]:
    """The ticks scheduled in ``[start_wall, end_wall]``: the multiples of ``every_s`` (epoch seconds)."""
    first = math.ceil(start_wall / every_s)
    last = math.floor(end_wall / every_s)
    return [round(index * every_s, 3) for index in range(first, last + 1)]


def _twice(completed: list[Run]) -> str:
    """Why a tick is ``tick_twice``: its runs that ended ok, and, when the library named its jobs, whether they are
    several jobs for one tick or one job run again (a completion cut off, a job given to another worker)."""
    workers = ", ".join(run.worker for run in completed)
    said = f"{len(completed)} runs ended ok (workers {workers})"
    jobs = {run.library_job for run in completed}
    if None in jobs:
        return said + "; the library's job ids not recorded"
    if len(jobs) == 1:
        return said + f": one job ({next(iter(jobs))}) run again"
    return said + f": {len(jobs)} jobs for one tick ({', '.join(sorted(str(job) for job in jobs))})"


def _covered(tick: float, intervals: list[tuple[float, float]], slack: float) -> bool:
    return any(start - slack <= tick <= end + slack for start, end in intervals)


def check_schedule(
    runs: list[Run],
    ticks: list[float],
    every_s: float,
    down: dict[str, list[tuple[float, float]]],
    skips: list[dict[str, str]],
) -> TickVerdict:
    """Judge each tick of ``ticks``: ``down`` maps a skip's ``when`` (``scheduler_down``, ``broker_down``) to the
    wall-clock intervals it held; ``skips`` are the library's documented skips (``when``, ``quote``, ``doc``). A
    missed tick within one period of such an interval is ``tick_skipped`` by that skip."""
    by_tick: dict[float, list[Run]] = {tick: [] for tick in ticks}
    verdict = TickVerdict(len(ticks))
    for run in runs:
        if run.tick is None:
            continue
        nearest = round(round(run.tick / every_s) * every_s, 3)
        if abs(nearest - run.tick) > TICK_MATCH_S or nearest not in by_tick:
            verdict.off_window += 1
            continue
        by_tick[nearest].append(run)
    for tick in ticks:
        mine = sorted(by_tick[tick], key=lambda run: run.start)
        shown = [(run.worker, run.start, run.end, run.ok) for run in mine]
        completed = [run for run in mine if run.ok]
        if len(completed) > 1:
            verdict.findings.append(TickFinding("tick_twice", tick, shown, _twice(completed)))
        elif not completed:
            began = f"{len(mine)} run(s) began, none ended ok" if mine else "no run began"
            skip = next((skip for skip in skips if _covered(tick, down.get(skip["when"], []), every_s)), None)
            if skip is None:
                verdict.findings.append(TickFinding("tick_missed", tick, shown, began))
            else:
                why = f"{began}; within {skip['when']}, skipped as documented: “{skip['quote']}” ({skip['doc']})"
                verdict.findings.append(TickFinding("tick_skipped", tick, shown, why))
    return verdict


def check_interval_schedule(
    runs: list[Run],
    window: tuple[float, float],
    every_s: float,
    down: dict[str, list[tuple[float, float]]],
    skips: list[dict[str, str]],
) -> TickVerdict:
    """Judge an interval schedule, whose ticks are no fixed grid (Celery beat's ``schedule=1.0``: each due one
    period after the scheduler's last send): a tick is the time the scheduler stamped on its message, so runs of
    one message (a redelivery) share it. A tick whose runs completed more than once, or that came less than half
    a period after the tick before it (a second scheduler's), is ``tick_twice``; a tick none of whose runs
    completed is ``tick_missed``; and a gap of G periods between ticks (or the window's ends) holds
    ``round(G) - 1`` ticks that no scheduler sent, each missed, or skipped when a documented skip covers it."""
    start, end = window
    by_tick: dict[float, list[Run]] = {}
    verdict = TickVerdict(0)
    for run in runs:
        if run.tick is None:
            continue
        if not start <= run.tick <= end:
            verdict.off_window += 1
            continue
        by_tick.setdefault(round(run.tick, 3), []).append(run)
    previous: float | None = None
    edges = [start]
    for tick in sorted(by_tick):
        mine = sorted(by_tick[tick], key=lambda run: run.start)
        shown = [(run.worker, run.start, run.end, run.ok) for run in mine]
        completed = [run for run in mine if run.ok]
        verdict.ticks += 1
        if previous is not None and tick - previous < every_s / 2:
            why = f"sent {tick - previous:.3f} s after the tick before it: a second tick for one period"
            verdict.findings.append(TickFinding("tick_twice", tick, shown, why))
        elif len(completed) > 1:
            verdict.findings.append(TickFinding("tick_twice", tick, shown, _twice(completed)))
        elif not completed:
            verdict.findings.append(TickFinding("tick_missed", tick, shown, f"{len(mine)} run(s) began, none ended ok"))
        if previous is None or tick - previous >= every_s / 2:
            edges.append(tick)
        previous = tick
    edges.append(end)
    for left, right in itertools.pairwise(edges):
        for index in range(1, round((right - left) / every_s)):
            tick = round(left + index * every_s, 3)
            verdict.ticks += 1
            skip = next((skip for skip in skips if _covered(tick, down.get(skip["when"], []), every_s)), None)
            if skip is None:
                why = f"no tick sent between {left:.3f} and {right:.3f} ({right - left:.1f} s)"
                verdict.findings.append(TickFinding("tick_missed", tick, [], why))
            else:
                why = f"no tick sent; within {skip['when']}, skipped as documented: “{skip['quote']}” ({skip['doc']})"
                verdict.findings.append(TickFinding("tick_skipped", tick, [], why))
    return verdict
