"""The schedule workload's report: one JSON document per ``alkstore faults LIB --workload schedule`` run.

Its own kind (``alkstore-runtime-faults-schedule``), beside the jobs workload's reports rather than inside them:
a tick is no job, and the jobs reports' readers (the page's table, the claims) stay as they are. It holds what
the runner declared of its scheduler (period, one scheduler or every worker's, grace, skips, promises and
caveats with their quotes), and per run: the window, the count of ticks run once, twice, missed and skipped,
every finding (tick, its runs), the fault, the workers that exited, and the command that replays it.
"""

from __future__ import annotations

from typing import Any

from alkstore_faults.fault_report import event_json, report_head
from alkstore_faults.runner_program import Description, Runner
from alkstore_faults.schedule_run import ScheduleRun

KIND = "alkstore-runtime-faults-schedule"
VERSION = 1


def replay_command(runner: Runner, run: ScheduleRun) -> str:
    return (
        f"alkstore faults {runner.spec} --workload schedule --fault {run.fault} --seed {run.seed} --round {run.round}"
    )


def tick_counts(run: ScheduleRun) -> dict[str, int | None]:
    """The run's tick counts; ``None`` each when the checker did not run."""
    keys = ("ticks", "tick_once", "tick_twice", "tick_missed", "tick_skipped")
    return dict(run.verdict.counts()) if run.verdict else dict.fromkeys(keys)


def broken_tick_promises(description: Description, run: ScheduleRun) -> list[dict[str, Any]]:
    if run.verdict is None or description.schedule is None:
        return []
    return [
        {**promise.as_json(), "observed": run.verdict.count(promise.outcome)}
        for promise in description.schedule.promises
        if promise.covers(run.fault)
        and promise.limit is not None
        and run.verdict.count(promise.outcome) > promise.limit
    ]


def run_json(runner: Runner, description: Description, run: ScheduleRun) -> dict[str, Any]:
    return {
        "fault": run.fault,
        "round": run.round,
        "seed": run.seed,
        "error": run.error,
        "seconds": round(run.seconds, 2),
        "window": None if run.window is None else [round(run.window[0], 3), round(run.window[1], 3)],
        "counts": tick_counts(run),
        "findings": [finding.as_json() for finding in run.verdict.findings] if run.verdict else [],
        "off_window_runs": run.verdict.off_window if run.verdict else None,
        "runs": len(run.runs),
        "down": {when: [[round(a, 3), round(b, 3)] for a, b in spans] for when, spans in run.down.items()},
        "events": [event_json(event) for event in run.events],
        "restarts": run.restarts,
        "skipped_ledger_lines": run.skipped_lines,
        "broken_promises": broken_tick_promises(description, run),
        "replay": replay_command(runner, run),
    }


def build_report(runner: Runner, description: Description, runs: list[ScheduleRun], seed: int) -> dict[str, Any]:
    assert description.schedule is not None
    return {
        "kind": KIND,
        "version": VERSION,
        **report_head(runner, description, seed),
        "schedule": description.schedule.as_json(),
        "runs": [run_json(runner, description, run) for run in runs],
    }
