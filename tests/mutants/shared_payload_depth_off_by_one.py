"""Shared-code mutant: one line of ``validation._walk_json_value`` — breaks E8 for every engine.

nesting deeper than 500 levels is refused (DEC-payload-json); here the walk refuses at 500 itself, so
a payload nested exactly 500 levels is a ``PayloadError``.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-payload-depth-off-by-one",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "_walk_json_value",
        "if depth > MAX_PAYLOAD_DEPTH:",
        "if depth >= MAX_PAYLOAD_DEPTH:",
    ),
)
MUTANT = Mutant(
    clause="E8",
    rows=("bounds_at_their_edge",),
    what="the shared payload check refuses a payload nested 500 levels, which the contract accepts",
)
