"""Shared-code mutant: the jitter half of the delay spans half its width — breaks R5 (and R2) for every engine.

contract R2: ``d`` uniform on ``[cap/2, cap]``, half guaranteed, half jitter;
R5: the jitter really spreads. Here ``backoff_delay_s`` draws its jitter on
``[0, cap/4]`` instead of ``[0, cap/2]``: every delay still lies in R2's range,
but none in its upper half. ``resolution`` imported ``backoff_delay_s`` by name,
so the replacement goes into ``alkstore_contract.resolution``, where
``decide_retry`` (the kit's retry) looks it up. Applied on
the adapter's first ``open_store`` (see ``patching``).
``backoff_curve_equivalence``'s jitter leg sees both halves not filled.
"""

from __future__ import annotations

import random
from functools import partial

from alkstore_contract import backoff
from tests.mutants.catalog import Mutant
from tests.mutants.patching import patch, shared_code_mutant


def _half_jitter(attempts: int, base_s: float, rng: random.Random) -> float:
    low, high = backoff.backoff_range_s(attempts, base_s)
    return low + rng.uniform(0, (high - low) / 2)


adapter = shared_code_mutant(
    "mut-shared-backoff-jitter-half", partial(patch, "alkstore_contract.resolution", "backoff_delay_s", _half_jitter)
)
MUTANT = Mutant(
    clause="R5",
    rows=("backoff_curve_equivalence",),
    what="the shared backoff code draws its jitter on [0, cap/4] instead of [0, cap/2]: no delay in the upper half",
)
