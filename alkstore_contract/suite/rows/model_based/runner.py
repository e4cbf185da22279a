"""How ``model_based`` runs its programs: Hypothesis, synchronously, in a thread with an event loop of its own.

Part of the suite.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from alkstore_contract.adapter import Capability, EngineAdapter
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


HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "alkstore-hypothesis"
"""Where Hypothesis keeps its caches (unicode tables, constants) while the row runs: never the user's cwd."""


@contextmanager
def _hypothesis_home_outside_cwd() -> Iterator[None]:
    """Keep Hypothesis from creating ``.hypothesis/`` in the directory a certify run was started from.

    The row stores no examples (``database=None``), but Hypothesis still writes caches under its home
    directory, ``./.hypothesis`` by default. A user's own ``HYPOTHESIS_STORAGE_DIRECTORY`` is left alone;
    otherwise the home is a directory under the system's temp dir for the row, and reset afterwards, so the
    user's own Hypothesis tests in the same run find theirs where they always do.
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    set_hypothesis_home_dir(HYPOTHESIS_HOME)
    try:
        yield
    finally:
        set_hypothesis_home_dir(None)


def run_programs(
    adapter: EngineAdapter,
    engine_spec: str,
    location: str,
    clock: ManualClock,
    seed_: int,
    examples: int,
    slack: timedelta = timedelta(0),
) -> tuple[int, Tally]:
    """Run ``examples`` programs on ``location``; how many ran and what they reached.

    ``slack`` is how far from the exact instant the engine may keep one (``Model.slack``).

    Meant for a thread of its own (``asyncio.to_thread``): Hypothesis drives the machine
    synchronously, so the engine runs on an event loop this function opens.
    """
    with asyncio.Runner() as runner:
        bench = Bench(
            adapter,
            engine_spec,
            location,
            clock,
            seed_,
            runner,
            slack=slack,
            releases=Capability.RELEASE in adapter.capabilities,
            unique_keys=Capability.UNIQUE_KEYS in adapter.capabilities,
        )
        try:
            with _hypothesis_home_outside_cwd():
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
