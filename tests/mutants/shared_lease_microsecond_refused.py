"""Shared-code mutant: one line of ``validation.duration_seconds`` — breaks S2 for every engine.

a lease is at least 1 µs (DEC-bounds, DEC-lease-minimum); here ``duration_seconds`` compares with
``<=``, so a visibility timeout or a heartbeat ``extend`` of exactly 1 µs is refused.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-lease-microsecond-refused",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "duration_seconds",
        "seconds < MIN_POSITIVE_DURATION_S",
        "seconds <= MIN_POSITIVE_DURATION_S",
    ),
)
MUTANT = Mutant(
    clause="S2",
    rows=("bounds_at_their_edge",),
    what="the shared duration check refuses a lease of exactly 1 µs (visibility timeout and heartbeat extend)",
)
