"""What the jobs workload's command and the schedule workload's share: each fault run the asked rounds, a line
said as each run ends, and the line that reports a broken promise. Written once, so the two commands run and
speak the same way."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from alkstore_faults.fault_report import write_report
from alkstore_faults.runner_program import Description, Runner


class Judged(Protocol):
    """A run of either workload: its verdict is ``None`` when the run could not be made."""

    @property
    def verdict(self) -> object | None: ...


Run = TypeVar("Run", bound=Judged)
ROUNDS = 3
"""How many times each fault runs without ``--short``: a fault's timing varies, one run may miss what a third
catches."""


async def run_rounds(
    run_one: Callable[[Runner, Description, str, int, int, bool], Awaitable[Run]],
    build_report: Callable[[Runner, Description, list[Run], int], dict[str, Any]],
    report_name: str,
    runner: Runner,
    description: Description,
    args: argparse.Namespace,
    faults: list[str],
    seed: int,
    say: Callable[[str], None],
    line: Callable[[Run], str],
) -> tuple[list[Run], Path, int]:
    """``run_one`` (``run_fault``, ``run_schedule``) under every fault of each round the command asks (``--round``
    one, ``--short`` the first, else ``ROUNDS``), saying each run's ``line`` as it ends (a run lasts minutes:
    the lines show progress); then the report, written to ``--report`` or ``reports/faults-REPORT_NAME.json``.
    The runs, that path, and the exit status so far: 1 when a run could not be made (a check that did not run is
    no pass), else 0."""
    rounds = [args.round_] if args.round_ is not None else range(1 if args.short else ROUNDS)
    runs: list[Run] = []
    for round_ in rounds:
        for fault in faults:
            run = await run_one(runner, description, fault, seed, round_, args.keep)
            runs.append(run)
            say(line(run))
    path = args.report or Path("reports") / f"faults-{report_name}.json"
    write_report(build_report(runner, description, runs, seed), path)
    return runs, path, int(any(run.verdict is None for run in runs))


def broken_promise_line(fault: str, round_: int, promise: dict[str, Any]) -> str:
    """The line that says a promise broke under ``fault`` in ``round_``: the outcome, what was seen against the
    promise's limit, and the docs' words with where they stand."""
    return (
        f"BROKEN PROMISE under {fault} (round {round_}): {promise['outcome']} {promise['observed']} > "
        f'{promise["max"]}; the docs say: "{promise["quote"]}" ({promise["doc"]})'
    )
