"""How ``model_based`` runs its programs: Hypothesis, synchronously, in a thread with an event loop of its own.

Part of the suite.
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from alkstore_contract.adapter import EngineAdapter
from alkstore_contract.clock import ManualClock
from alkstore_contract.suite.checks import ContractViolation
from alkstore_contract.suite.rows.model_based.bench import Bench, Tally
from alkstore_contract.suite.rows.model_based.machine import ModelMachine
from alkstore_contract.suite.rows.model_based.strategies import STEPS


def _run_programs(bench: Bench, examples: int) -> None:
    """Run the state machine on ``bench`` (in this thread, on ``bench.runner``'s loop)."""
    machine = type("ModelMachine", (ModelMachine,), {"bench": bench})
    run_state_machine_as_test(
        seed(bench.seed)(machine),
        settings=settings(
            max_examples=examples,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            phases=(Phase.explicit, Phase.generate, Phase.shrink),
            verbosity=Verbosity.quiet,
            suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much),
        ),
    )


def run_programs(
    adapter: EngineAdapter, engine_spec: str, location: str, clock: ManualClock, seed_: int, examples: int
) -> tuple[int, Tally]:
    """Run ``examples`` programs on ``location``; how many ran and what they reached.

    Meant for a thread of its own (``asyncio.to_thread``): Hypothesis drives the machine
    synchronously, so the engine runs on an event loop this function opens.
    """
    with asyncio.Runner() as runner:
        bench = Bench(adapter, engine_spec, location, clock, seed_, runner)
        try:
            _run_programs(bench, examples)
        except Flaky as exc:
            if bench.first_violation is None:
                raise
            raise ContractViolation(
                bench.first_violation.replace("The shrunk program", "The program (not shrunk)", 1)
                + "\n\n(Hypothesis could not replay this failure: the same program gave another outcome on a "
                "fresh store. The first run shared its store with earlier programs, so its backoff jitter came "
                "from a different point of the seeded random sequence; if no retry() without delay is involved, "
                "look for engine state kept outside the store, or nondeterminism such as unordered RETURNING rows.)"
            ) from exc
        finally:
            bench.close()
        return bench.programs, bench.tally
