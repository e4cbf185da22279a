"""Shared-code mutant: one line of ``validation.validate_max_attempts`` — breaks E9 for every engine.

``max_attempts`` is 1 … 2³¹−1 (DEC-bounds); here ``validate_max_attempts`` lets ``2**31`` through, so
QueueOpts and enqueue accept a value one past the limit.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-max-attempts-one-past",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "validate_max_attempts",
        "1 <= value <= INT32_MAX",
        "1 <= value <= INT32_MAX + 1",
    ),
)
MUTANT = Mutant(
    clause="E9",
    rows=("bounds_at_their_edge",),
    what="the shared validation lets max_attempts reach 2**31, one past its limit 2**31 - 1",
)
