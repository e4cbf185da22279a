"""Shared-code mutant: one line of ``resolution.decide_retry`` — breaks R1 for every engine.

``retry()`` stores ``last_error = error`` when given, and ``""`` is given (R1, DEC-worker-text); here
``decide_retry`` turns ``""`` into ``None``, so the previous error is kept (DEC-retry-keeps-error).

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-retry-empty-error-dropped",
    partial(
        edit_function,
        "alkstore_contract.resolution",
        "decide_retry",
        "return RetryDecision(dead=False, delay_s=seconds, last_error=error)",
        "return RetryDecision(dead=False, delay_s=seconds, last_error=error or None)",
    ),
)
MUTANT = Mutant(
    clause="R1",
    rows=("bounds_at_their_edge",),
    what='the shared retry() resolution turns error="" into None, so the previous last_error is kept',
)
