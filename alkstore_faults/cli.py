"""``alkstore faults LIBRARY``: run the workload under every fault against a library's runner, and judge it.

Prints, per run of a fault, the count of each of the checker's outcomes (docs/runtime-faults.md, "The
checker": the jobs no run completed, classed by the library's own final state; twice; overlaps while both runs
executed or while one was stopped; late completions by what the library did with them; cancelled runs), the
recovery delays, and the promises of the library's docs that a run broke or could not judge. ``--keep`` keeps
each run's scratch directory (jobs, ledgers, worker logs, the runner's state) and prints where. Exit code: 0
every fault reached a job and every promise was judged and kept; 1 a promise was broken or not judged, or a fault
reached no job or could not be run (a check that did not run is no pass); 2 the runner cannot be found or does
not describe itself. ``--workload schedule`` runs the schedule workload instead (``alkstore_faults.schedule_cli``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
from pathlib import Path
from typing import TextIO

from alkstore_faults.checker import OUTCOMES
from alkstore_faults.fault_report import (
    broken_promises,
    build_report,
    counts,
    replay_command,
    unjudged_promises,
)
from alkstore_faults.promises import judged
from alkstore_faults.runner_program import FAULTS, Description, Runner, RunnerError, find_runner
from alkstore_faults.scenario import FaultRun, run_fault
from alkstore_faults.schedule_cli import run_schedules
from alkstore_faults.schedule_spec import WORKLOADS
from alkstore_faults.table import LABELS
from alkstore_faults.workload_cli import broken_promise_line, run_rounds


def _say(text: str, stream: TextIO = sys.stdout) -> None:
    """One line out, at once: a run lasts minutes, and its lines show progress."""
    stream.write(text + "\n")
    stream.flush()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "library", help="a runner's name (ecosystem/<library>/runner*/runner.json), or a directory with runner.json"
    )
    parser.add_argument("--short", action="store_true", help="each fault once (the full mode runs each three times)")
    parser.add_argument("--fault", choices=FAULTS, action="append", help="only this fault (repeatable)")
    parser.add_argument("--seed", type=int, help="the run's seed (default: a random one, printed)")
    parser.add_argument("--round", type=int, dest="round_", help="only this round (with --seed: a replay)")
    parser.add_argument("--report", type=Path, help="where to write the JSON report (default: reports/faults-LIB.json)")
    parser.add_argument(
        "--workload",
        choices=WORKLOADS,
        default="jobs",
        help="jobs (default): the jobs workload; schedule: three workers running the library's one-second schedule "
        "(a runner that declares it in describe's workloads)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep each run's scratch directory (ledgers, worker logs) and print where"
    )


def _line(run: FaultRun) -> str:
    if run.verdict is None:
        kept = f" (kept in {run.kept}, worker logs in logs/)" if run.kept else ""
        return f"  {run.fault:<24} round {run.round}: NOT RUN{kept}: {(run.error or '').splitlines()[0]}"
    counted = [outcome for outcome in OUTCOMES if run.verdict.count(outcome)]
    tally = ", ".join(f"{LABELS.get(outcome, outcome)} {run.verdict.count(outcome)}" for outcome in counted)
    tally = tally or "no finding"
    delays = sorted(run.verdict.recovery_delays)
    shown = ", ".join(f"{delay:.2f}" for delay in delays) or "none"
    lost = f", never went on after the fault: {', '.join(run.verdict.unrecovered)}" if run.verdict.unrecovered else ""
    exits = f"; {len(run.restarts)} worker(s) exited on their own, restarted" if run.restarts else ""
    took = f"[{run.seconds:.0f} s]"
    kept = f"; kept in {run.kept} (worker logs in logs/)" if run.kept else ""
    return f"  {run.fault:<24} round {run.round}: {tally}; recovery delays (s): {shown}{lost}{exits}{kept} {took}"


async def _run_all(args: argparse.Namespace) -> int:
    try:
        runner = find_runner(args.library)
        description = await asyncio.to_thread(runner.describe)
    except RunnerError as exc:
        _say(f"alkstore faults: {exc}", sys.stderr)
        return 2
    if args.workload not in description.workloads:
        _say(
            f"alkstore faults: runner {runner.name!r} serves the workloads {', '.join(description.workloads)}, "
            f"not {args.workload!r} (describe's workloads)",
            sys.stderr,
        )
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    if args.workload == "schedule":
        return await run_schedules(runner, description, args, seed, _say)
    return await _run_jobs(runner, description, args, seed)


async def _run_jobs(runner: Runner, description: Description, args: argparse.Namespace, seed: int) -> int:
    faults = [fault for fault in description.faults if not args.fault or fault in args.fault]
    if args.fault and not faults:
        _say(
            f"alkstore faults: runner {runner.name!r} takes none of {args.fault}; it takes "
            f"{', '.join(description.faults)}",
            sys.stderr,
        )
        return 2
    _say(
        f"{description.library} {description.version} through runner {runner.name!r} ({runner.language}, "
        f"{runner.broker}); lease {description.lease_s} s, recovery window {description.recovery_window_s} s; "
        f"seed {seed}",
    )
    runs, path, status = await run_rounds(
        run_fault, build_report, runner.name, runner, description, args, faults, seed, _say, _line
    )
    for run in runs:
        for promise in broken_promises(description, run):
            status = 1
            _say(broken_promise_line(run.fault, run.round, promise))
            for finding in run.verdict.findings if run.verdict else []:
                if finding.outcome.startswith(promise["outcome"]):
                    _say(f"    {finding.outcome} {finding.job} workers {', '.join(finding.workers)}: {finding.detail}")
            _say(f"    replay: {replay_command(runner, run)}")
        for promise in unjudged_promises(description, run):
            status = 1
            unseen = (
                "job(s) no run completed whose final state the library was not asked or could not say (unread)"
                if promise["outcome"] == "lost"
                else "late completion(s) whose fate the runner did not record (no ack record)"
            )
            _say(
                f"PROMISE NOT JUDGED under {run.fault} (round {run.round}): {promise['outcome']}: "
                f'{promise["observed"]} {unseen}; the docs say: "{promise["quote"]}" ({promise["doc"]})'
            )
    for caveat in description.caveats:
        seen = sum(
            judged(caveat.outcome, counts(run), promise=False)[0] or 0
            for run in runs
            if run.verdict and caveat.covers(run.fault)
        )
        _say(f'documented caveat: {caveat.outcome} observed {seen}; the docs say: "{caveat.quote}" ({caveat.doc})')
    _say(f"report: {path}; {'promises kept' if status == 0 else 'NOT KEPT, not judged or not run'}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="alkstore faults", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def _interrupted(signum: int, _frame: object) -> None:
    """``SIGTERM``/``SIGHUP`` end the run as Ctrl+C does: the running fault's ``finally`` stops what it started."""
    raise KeyboardInterrupt(f"signal {signum}")


def run(args: argparse.Namespace) -> int:
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return asyncio.run(_run_all(args))
    except KeyboardInterrupt as exc:
        _say(
            f"alkstore faults: interrupted ({exc or 'Ctrl+C'}); every worker and broker it started is stopped",
            sys.stderr,
        )
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
