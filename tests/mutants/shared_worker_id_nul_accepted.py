"""Shared-code mutant: one line of ``validation.validate_worker_id`` — breaks C6 for every engine.

a worker id holds no NUL (DEC-worker-text, C6); here ``validate_worker_id`` checks only the UTF-8
encoding, so SQLite stores a claimant Postgres could not.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-worker-id-nul-accepted",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "validate_worker_id",
        "problem = _text_problem(worker_id)",
        "problem = _utf8_problem(worker_id)",
    ),
)
MUTANT = Mutant(
    clause="C6",
    rows=("bounds_at_their_edge",),
    what="the shared worker-id check skips the NUL test, so a worker id holding NUL claims",
)
