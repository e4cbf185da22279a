"""Shared-code mutant: one line of ``validation.validate_priority`` — breaks E9 for every engine.

``priority`` fits a signed 64-bit integer (DEC-bounds); here ``validate_priority`` compares with ``<``,
so the smallest one, ``-2**63``, is refused.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-priority-min-refused",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "validate_priority",
        "INT64_MIN <= value",
        "INT64_MIN < value",
    ),
)
MUTANT = Mutant(
    clause="E9",
    rows=("bounds_at_their_edge",),
    what="the shared validation refuses priority -2**63, the smallest signed 64-bit int",
)
