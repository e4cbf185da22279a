"""The runtime-faults report: one JSON document per ``alkstore faults`` run, checked against its JSON Schema.

It holds what the runner declared (library, version, settings with their docs, promises and caveats with their
quotes, the policies and recovery rules that explain a library's final states), and per run of a fault: the
counts, every finding (job, workers, times), the library's own final state of each job (``library_states``,
``null`` for a protocol-1 runner), the recovery delays, the seed and the command that replays it, and whether
the fault reached a job at all (one that did not is no pass). Version 2 added the states, the split counts and
``protocol``; ``alkstore_faults.promises.normalised`` reads a version-1 report's counts.
"""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alkstore_faults.checker import OUTCOMES, FaultEvent, distribution
from alkstore_faults.promises import judged
from alkstore_faults.runner_program import Description, Runner
from alkstore_faults.scenario import FaultRun

SCHEMA = Path(__file__).with_name("report.schema.json")


def replay_command(runner: Runner, run: FaultRun) -> str:
    return f"alkstore faults {runner.spec} --fault {run.fault} --seed {run.seed} --round {run.round}"


def counts(run: FaultRun) -> dict[str, int | None]:
    """The run's count of each outcome; ``None`` each when the checker did not run."""
    return {outcome: (run.verdict.count(outcome) if run.verdict else None) for outcome in OUTCOMES}


VERSION = 2
"""The report's version: 2 carries ``library_states`` and the split counts (docs/runtime-faults.md)."""


def broken_promises(description: Description, run: FaultRun) -> list[dict[str, Any]]:
    """Each promise of the library's docs this run broke, with the count that broke it (alkstore_faults.promises)."""
    if run.verdict is None:
        return []
    broken = []
    for promise in description.promises:
        count, _ = judged(promise.outcome, counts(run), promise=True)
        if promise.covers(run.fault) and promise.limit is not None and count is not None and count > promise.limit:
            broken.append({**promise.as_json(), "observed": count})
    return broken


def unjudged_promises(description: Description, run: FaultRun) -> list[dict[str, Any]]:
    """Each promise this run could not judge, with how many findings left it so (``observed``): a fencing claim
    (``stale``) with late completions whose fate the runner did not see, a ``lost`` claim with jobs whose final
    state was not read."""
    if run.verdict is None:
        return []
    unjudged = []
    for promise in description.promises:
        _, unseen = judged(promise.outcome, counts(run), promise=True)
        if promise.covers(run.fault) and unseen:
            unjudged.append({**promise.as_json(), "observed": unseen})
    return unjudged


def run_json(runner: Runner, description: Description, run: FaultRun) -> dict[str, Any]:
    verdict = run.verdict
    return {
        "fault": run.fault,
        "round": run.round,
        "seed": run.seed,
        "reached": run.reached,
        "error": run.error,
        "seconds": round(run.seconds, 2),
        "jobs": len(run.jobs),
        "runs": len(run.runs),
        "ledger": [
            [
                r.job,
                r.worker,
                r.pid,
                round(r.start, 3),
                None if r.end is None else round(r.end, 3),
                r.ok,
                r.accepted,
                r.cancelled,
            ]
            for r in run.runs
        ],
        "counts": counts(run),
        "findings": [finding.as_json() for finding in verdict.findings] if verdict else [],
        "recovery_delay_s": distribution(verdict.recovery_delays if verdict else []),
        "unrecovered": verdict.unrecovered if verdict else [],
        "events": [event_json(event) for event in run.events],
        "library_states": run.states,
        "skipped_ledger_lines": run.skipped_lines,
        "restarts": run.restarts,
        "broken_promises": broken_promises(description, run),
        "unjudged_promises": unjudged_promises(description, run),
        "replay": replay_command(runner, run),
    }


def event_json(event: FaultEvent) -> dict[str, Any]:
    """A fault as the reports keep it: its kind, when (monotonic), its worker, the jobs it hit, what was done."""
    return {
        "kind": event.kind,
        "at": round(event.at, 3),
        "until": round(event.until, 3),
        "worker": event.worker,
        "jobs": event.jobs,
        "detail": event.detail,
    }


def report_head(runner: Runner, description: Description, seed: int) -> dict[str, Any]:
    """What every report of a run of ``alkstore faults`` starts with, whatever its workload: the library, the
    runner, the seed, when and where, and the settings."""
    return {
        "library": description.library,
        "library_version": description.version,
        "runner": runner.name,
        "language": runner.language,
        "broker": runner.broker,
        "seed": seed,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "system": platform.platform()},
        "settings": description.settings,
        "lease_s": description.lease_s,
        "recovery_window_s": description.recovery_window_s,
    }


def build_report(runner: Runner, description: Description, runs: list[FaultRun], seed: int) -> dict[str, Any]:
    return {
        "kind": "alkstore-runtime-faults",
        "version": VERSION,
        "protocol": runner.protocol,
        **report_head(runner, description, seed),
        "promises": [promise.as_json() for promise in description.promises],
        "caveats": [caveat.as_json() for caveat in description.caveats],
        "policies": list(description.policies),
        "recovery_rules": list(description.recovery_rules),
        "warmup_s": description.warmup_s,
        **(description.extra or {}),
        "runs": [run_json(runner, description, run) for run in runs],
    }


def write_report(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
