"""Shared-code mutant: ``"expired"`` misspelt ``"expirad"`` — breaks X2 for every engine.

contract X2: the sweep moves every live job past its ``expires_at`` to dead with
``"expired"``. ``patching.rebind`` changes the string in
``alkstore_contract.resolution`` and in each engine module that imported it by
name for its sweep, as a one-letter slip in ``resolution.py`` would. Applied on
the adapter's first ``open_store`` (see ``patching``). Before
``alkstore_contract.suite.expected``, the rows, the model and the engine tests
imported this very string and certified the slip.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import rebind, shared_code_mutant

adapter = shared_code_mutant("mut-shared-last-error-expired", partial(rebind, "LAST_ERROR_EXPIRED", "expirad"))
MUTANT = Mutant(
    clause="X2", rows=("sweep_and_retention",), what='the shared code\'s LAST_ERROR_EXPIRED is "expirad", not "expired"'
)
