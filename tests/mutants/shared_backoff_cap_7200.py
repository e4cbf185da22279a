"""Shared-code mutant: ``alkstore_contract.backoff`` caps the backoff at two hours — breaks R2 for every engine.

contract R2: ``cap = min(b·2^(a−1), 3600 s)``. Here ``BACKOFF_CAP_S`` is 7200,
read by ``backoff_cap_s`` from ``alkstore_contract.backoff``'s globals at each
call, so every engine drawing through ``resolution`` (the kit's
``decide_retry``) waits up to two hours once the curve passes one. Applied on the adapter's first
``open_store`` (see ``patching``). Before ``alkstore_contract.suite.expected``,
the row took its cap from this very constant and certified it.
``backoff_curve_equivalence``'s cap leg (attempts 12 and 40, every clock)
sees delays past 3600 s.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import patch, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-backoff-cap-7200", partial(patch, "alkstore_contract.backoff", "BACKOFF_CAP_S", 7200.0)
)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="the shared backoff code caps delays at 7200 s instead of 3600 s",
)
