"""Shared-code mutant: the backoff cap every engine uses is two hours, not one — breaks R2.

SPEC R2: ``cap = min(b · 2^(a−1), 3600 s)``. The engines do not compute the
curve themselves: ``retry()`` without a delay calls
``alkstore_contract.resolution.resolve_retry`` → ``backoff_delay_s`` →
``backoff_range_s`` → ``backoff_cap_s``, which reads
``alkstore_contract.backoff.BACKOFF_CAP_S`` at every call. This module sets
that constant to 7200 s when it is imported, so from attempt 12 on base 5 s
EVERY engine in the process waits up to two hours — as if the shared source
said 7200. The adapter is the unchanged SQLite engine.

Importing this module patches the process: only its own subprocess may import
it (the catalog reads ``MUTANT`` from the source; see catalog.py). The suite
imports its rows after the adapter, so the row sees the patched constant too.
"""

from __future__ import annotations

import alkstore_contract.backoff
from tests.mutants.catalog import Mutant, sqlite_mutant

TWO_HOURS_S = 7200.0

alkstore_contract.backoff.BACKOFF_CAP_S = TWO_HOURS_S

adapter = sqlite_mutant("mut-shared-backoff-cap-7200")
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="the shared backoff curve every engine calls caps delays at 7200 s instead of 3600 s",
    known_survivor=(
        "backoff_curve_equivalence takes its expected ranges and its 3600 s cap from alkstore_contract.backoff, "
        "the code this mutant patches; killed once the cap leg states the contract's 3600 s itself"
    ),
)
