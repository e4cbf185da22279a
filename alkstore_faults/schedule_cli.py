"""``alkstore faults LIB --workload schedule``: the schedule workload under each fault the runner's scheduler
takes, three times each (once with ``--short``), its report written and its promises judged.

Exit code as for the jobs workload: 0 every run opened its window and every tick promise was kept; 1 a promise
was broken or a run could not be made (a check that did not run is no pass).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TextIO

from alkstore_faults.runner_program import Description, Runner
from alkstore_faults.schedule_report import broken_tick_promises, build_report, replay_command, tick_counts
from alkstore_faults.schedule_run import ScheduleRun, run_schedule
from alkstore_faults.workload_cli import broken_promise_line, run_rounds

Say = Callable[..., None]


def line(run: ScheduleRun) -> str:
    if run.verdict is None:
        return f"  {run.fault:<24} round {run.round}: NOT RUN: {(run.error or '').splitlines()[0]}"
    counts = tick_counts(run)
    tally = ", ".join(f"{key.replace('_', ' ')} {counts[key]}" for key in counts)
    exits = f"; {len(run.restarts)} worker(s) exited on their own, restarted" if run.restarts else ""
    kept = f"; kept in {run.kept}" if run.kept else ""
    return f"  {run.fault:<24} round {run.round}: {tally}{exits}{kept} [{run.seconds:.0f} s]"


async def run_schedules(runner: Runner, description: Description, args: argparse.Namespace, seed: int, say: Say) -> int:
    spec = description.schedule
    assert spec is not None
    err: TextIO = sys.stderr
    faults = [fault for fault in spec.faults if not args.fault or fault in args.fault]
    if not faults:
        say(
            f"alkstore faults: the schedule of {runner.name!r} takes none of {args.fault}; "
            f"it takes {', '.join(spec.faults)}",
            err,
        )
        return 2
    say(
        f"{description.library} {description.version} through runner {runner.name!r}: schedule workload, every "
        f"{spec.every_s} s, scheduler(s): {spec.schedulers}; seed {seed}"
    )
    runs, path, status = await run_rounds(
        run_schedule, build_report, f"{runner.name}-schedule", runner, description, args, faults, seed, say, line
    )
    for run in runs:
        for promise in broken_tick_promises(description, run):
            status = 1
            say(f"{broken_promise_line(run.fault, run.round, promise)}; replay: {replay_command(runner, run)}")
    for caveat in spec.caveats:
        seen = sum(run.verdict.count(caveat.outcome) for run in runs if run.verdict and caveat.covers(run.fault))
        say(f'documented caveat: {caveat.outcome} observed {seen}; the docs say: "{caveat.quote}" ({caveat.doc})')
    say(f"report: {path}; {'promises kept' if status == 0 else 'NOT KEPT or not run'}")
    return status
