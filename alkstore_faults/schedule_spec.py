"""What a runner says of its library's scheduler for the ``schedule`` workload (docs/runtime-faults.md, "The
schedule workload"): its period, whether every worker runs the scheduler or only one, how late a tick may run,
the ticks its docs say it skips, and its docs' promises about ticks fired twice or missed, each quoted.

Its own module, apart from ``runner_program``, so the checker and the report read the spec without the runner's
process handling; a runner that declares no ``schedule`` (every protocol-2 runner before it) has none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from alkstore_faults.promises import Promise, parse_promises

WORKLOADS = ("jobs", "schedule")
SCHEDULE_FAULTS = (
    "kill9",
    "pause",
    "broker_restart",
    "broker_restart_aof",
    "broker_restart_volatile",
    "net_cut",
)
"""The faults the ``schedule`` workload strikes with: ``startup`` and ``slow_handler`` are about one job's run."""
TICK_OUTCOMES = ("tick_twice", "tick_missed", "tick_skipped")
"""A tick run to completion more than once; by no run, and no documented skip explains it; by no run, skipped
under a rule the library's docs state (``skips``)."""
PROMISABLE_TICKS = ("tick_twice", "tick_missed")
SCHEDULERS = ("every", "one")
"""``every``: each worker runs the library's scheduler (a periodic task any worker may defer); ``one``: its docs
say to run a single scheduler (Celery's beat), which the harness gives the first worker and, once that one died,
the next worker it starts."""
TICKS = ("aligned", "interval")
"""``aligned``: the ticks are the whole multiples of the period since the epoch, and each run names its tick by
that scheduled time (procrastinate's, arq's, our worker's); ``interval``: each tick is due one period after the
scheduler's last send (Celery beat's ``schedule=1.0``), and a run names its tick by the time the scheduler sent it."""
SKIP_WHEN = ("scheduler_down", "broker_down")
"""When a documented skip applies: while no scheduler process ran (killed, stopped, not yet replaced), or while the
broker was down."""
MAX_GRACE_S = 60.0


@dataclass(frozen=True)
class ScheduleSpec:
    """``describe``'s ``schedule`` object, checked."""

    every_s: float
    schedulers: str
    ticks: str
    grace_s: float
    faults: tuple[str, ...]
    skips: tuple[dict[str, str], ...]
    promises: tuple[Promise, ...]
    caveats: tuple[Promise, ...]
    settings: tuple[dict[str, Any], ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "every_s": self.every_s,
            "schedulers": self.schedulers,
            "ticks": self.ticks,
            "grace_s": self.grace_s,
            "faults": list(self.faults),
            "skips": list(self.skips),
            "promises": [promise.as_json() for promise in self.promises],
            "caveats": [caveat.as_json() for caveat in self.caveats],
            "settings": list(self.settings),
        }


def parse_workloads(data: dict[str, Any]) -> tuple[tuple[str, ...], ScheduleSpec | None]:
    """``describe``'s ``workloads`` (default ``["jobs"]``: every runner written before the schedule workload) and
    its ``schedule`` object, required when ``schedule`` is one of them; a ``ValueError`` names what is wrong."""
    workloads = _some_of("workloads", data.get("workloads", ["jobs"]), WORKLOADS)
    if "schedule" not in workloads:
        if "schedule" in data:
            raise ValueError("a schedule object needs 'schedule' in workloads")
        return workloads, None
    return workloads, parse_schedule(dict(data["schedule"]))


def _one_of(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` as one of ``choices``, or a ``ValueError`` naming the field ``name`` and what it may be."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def _some_of(name: str, values: Iterable[object], choices: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` as one or more of ``choices``, or a ``ValueError`` naming the field ``name`` and what it may be."""
    chosen = tuple(values)
    if not chosen or any(value not in choices for value in chosen):
        raise ValueError(f"{name} must name some of {', '.join(choices)}, got {list(chosen)!r}")
    return tuple(map(str, chosen))


def parse_schedule(data: dict[str, Any]) -> ScheduleSpec:
    every = float(data["every_s"])
    if every != 1.0:
        raise ValueError(f"schedule.every_s must be 1 (the workload's one-second schedule), got {every}")
    grace = float(data.get("grace_s", 5.0))
    if not 0 < grace <= MAX_GRACE_S:
        raise ValueError(f"schedule.grace_s must be in (0, {MAX_GRACE_S:.0f}] seconds, got {grace}")
    faults = _some_of("schedule.faults", data["faults"], SCHEDULE_FAULTS)
    skips = tuple({key: str(value) for key, value in dict(skip).items()} for skip in data.get("skips", []))
    for skip in skips:
        if skip.get("when") not in SKIP_WHEN or not skip.get("quote", "").strip() or not skip.get("doc", "").strip():
            raise ValueError(f"each skip needs a when ({', '.join(SKIP_WHEN)}), a quote and a doc, got {skip!r}")
    settings = tuple(dict(setting) for setting in data.get("settings", []))
    for setting in settings:
        if not {"name", "value", "doc"} <= set(setting):
            raise ValueError(f"each schedule setting needs a name, a value and the doc it comes from, got {setting!r}")
    return ScheduleSpec(
        every_s=every,
        schedulers=_one_of("schedule.schedulers", data["schedulers"], SCHEDULERS),
        ticks=_one_of("schedule.ticks", data.get("ticks", "aligned"), TICKS),
        grace_s=grace,
        faults=faults,
        skips=skips,
        promises=parse_promises(
            data.get("promises", []), PROMISABLE_TICKS, faults, caveat=False, subject="a schedule promise"
        ),
        caveats=parse_promises(
            data.get("caveats", []), PROMISABLE_TICKS, faults, caveat=True, subject="a schedule promise"
        ),
        settings=settings,
    )
