"""Shared-code mutant: ``"failed"`` misspelt ``"failad"`` — breaks D1 for every engine.

contract D1: ``fail()`` without an error stores ``last_error = "failed"``.
``patching.rebind`` changes the string in ``alkstore_contract.resolution``,
where ``fail_error`` reads it, as a one-letter slip in ``resolution.py`` would.
Applied on the adapter's first ``open_store`` (see ``patching``). Before
``alkstore_contract.suite.expected``, the rows, the model and the engine tests
imported this very string and certified the slip.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import rebind, shared_code_mutant

adapter = shared_code_mutant("mut-shared-last-error-failed", partial(rebind, "LAST_ERROR_FAILED", "failad"))
MUTANT = Mutant(
    clause="D1", rows=("dead_letter",), what='the shared code\'s LAST_ERROR_FAILED is "failad", not "failed"'
)
