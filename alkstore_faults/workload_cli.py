"""What the jobs workload's command and the schedule workload's share: each fault run the asked rounds, a line
said as each run ends, and the line that reports a broken promise. Written once, so the two commands run and
speak the same way."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from alkstore_faults.runner_program import Description, Runner

Run = TypeVar("Run")
ROUNDS = 3
"""How many times each fault runs without ``--short``: a fault's timing varies, one run may miss what a third
catches."""


async def run_rounds(
    run_one: Callable[[Runner, Description, str, int, int, bool], Awaitable[Run]],
    runner: Runner,
    description: Description,
    args: argparse.Namespace,
    faults: list[str],
    seed: int,
    say: Callable[[str], None],
    line: Callable[[Run], str],
) -> list[Run]:
    """``run_one`` (``run_fault``, ``run_schedule``) under every fault of each round the command asks (``--round``
    one, ``--short`` the first, else ``ROUNDS``), saying each run's ``line`` as it ends (a run lasts minutes:
    the lines show progress)."""
    rounds = [args.round_] if args.round_ is not None else range(1 if args.short else ROUNDS)
    runs: list[Run] = []
    for round_ in rounds:
        for fault in faults:
            run = await run_one(runner, description, fault, seed, round_, args.keep)
            runs.append(run)
            say(line(run))
    return runs


def broken_promise_line(fault: str, round_: int, promise: dict[str, Any]) -> str:
    """The line that says a promise broke under ``fault`` in ``round_``: the outcome, what was seen against the
    promise's limit, and the docs' words with where they stand."""
    return (
        f"BROKEN PROMISE under {fault} (round {round_}): {promise['outcome']} {promise['observed']} > "
        f'{promise["max"]}; the docs say: "{promise["quote"]}" ({promise["doc"]})'
    )
