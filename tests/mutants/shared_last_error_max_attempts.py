"""Shared-code mutant: ``"max attempts exceeded"`` misspelt ``"max attempts exceedad"`` — breaks R4 for every engine.

contract R4: ``retry()`` on the last attempt without an error dead-letters with
``"max attempts exceeded"`` (and X2's sweep of an exhausted lease stores it
too). ``patching.rebind`` changes the string in ``alkstore_contract.resolution``
and in each engine module that imported it by name, as a one-letter slip in
``resolution.py`` would. Applied on the adapter's first ``open_store`` (see
``patching``). Before ``alkstore_contract.suite.expected``, the rows, the model and
the engine tests imported this very string and certified the slip.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import rebind, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-last-error-max-attempts", partial(rebind, "LAST_ERROR_MAX_ATTEMPTS", "max attempts exceedad")
)
MUTANT = Mutant(
    clause="R4",
    rows=("backoff_curve_equivalence", "dead_letter"),
    what='the shared code\'s LAST_ERROR_MAX_ATTEMPTS is "max attempts exceedad", not "max attempts exceeded"',
)
