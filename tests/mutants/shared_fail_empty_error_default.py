"""Shared-code mutant: one line of ``resolution.fail_error`` — breaks D1 for every engine.

an empty ``str`` is an error given, stored as ``""`` (D1, DEC-worker-text); here ``fail_error`` tests
the error's truth, so ``fail(error="")`` stores ``"failed"``.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-fail-empty-error-default",
    partial(
        edit_function,
        "alkstore_contract.resolution",
        "fail_error",
        "error if error is not None else",
        "error if error else",
    ),
)
MUTANT = Mutant(
    clause="D1",
    rows=("bounds_at_their_edge",),
    what='the shared fail() resolution treats error="" as no error and stores "failed"',
)
