"""Shared-code mutant: one line of ``validation._walk_json_value`` — breaks E8 for every engine.

an int of more than 4300 digits is refused (DEC-payload-json); here ``10**4300`` (4301 digits) passes the
check, and writing it as JSON raises ``ValueError`` instead of ``PayloadError``.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-payload-int-one-digit-long",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "_walk_json_value",
        "abs(value) >= _SMALLEST_TOO_LONG_INT",
        "abs(value) > _SMALLEST_TOO_LONG_INT",
    ),
)
MUTANT = Mutant(
    clause="E8",
    rows=("bounds_at_their_edge",),
    what="the shared payload check lets 10**4300, an int of 4301 digits, through (json then raises ValueError)",
)
