"""Shared-code mutant: ``alkstore_contract.backoff`` doubles once too often — breaks R2 for every engine.

contract R2: ``cap = min(b·2^(a−1), 3600 s)`` after ``a`` attempts. Here the
exponent is ``a``, not ``a − 1``: every uncapped delay lands in ``[b·2^(a−1),
b·2^a]``, twice the contract's. ``backoff_range_s`` finds ``backoff_cap_s`` in
``alkstore_contract.backoff``'s globals, so the replacement goes there.
Applied on the adapter's first ``open_store`` (see ``patching``).
``backoff_curve_equivalence``'s curve, jitter and cap legs see it.
"""

from __future__ import annotations

from functools import partial

from alkstore_contract import backoff
from tests.mutants.catalog import Mutant
from tests.mutants.patching import patch, shared_code_mutant


def _cap_one_doubling_late(attempts: int, base_s: float) -> float:
    return min(base_s * 2.0 ** min(max(attempts, 1), 64), backoff.BACKOFF_CAP_S)


adapter = shared_code_mutant(
    "mut-shared-backoff-exponent", partial(patch, "alkstore_contract.backoff", "backoff_cap_s", _cap_one_doubling_late)
)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="the shared backoff code uses b·2^a instead of b·2^(a−1): every uncapped delay doubled",
)
