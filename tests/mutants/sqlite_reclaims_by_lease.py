"""Mutant: a lapsed lease competes for a claim at its lease deadline, not its run_at — breaks C2.

contract C2: "A reclaimed job keeps its ``run_at``" — a reclaim takes its place
among ready jobs by priority and its own ready time. This engine's claim
statement selects a lapsed lease as if it had become ready when its lease
ran out (``lease_expires_at AS run_at``), a tempting reading of "it is ready
again now". Stored values stay right and the handles come back sorted by the
stored ``run_at``, so only WHICH jobs a claim of fewer than are claimable
takes is wrong: ``claim_order``'s reclaim-selection leg sees it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

_LAPSED = "SELECT id, priority, run_at FROM jobs\n    WHERE queue = :queue AND state = 'processing'"
_AT_DEADLINE = (
    "SELECT id, priority, lease_expires_at AS run_at FROM jobs\n    WHERE queue = :queue AND state = 'processing'"
)


adapter = sql_mutant("mut-sqlite-reclaims-by-lease", "CLAIM_SQL", old=_LAPSED, new=_AT_DEADLINE)
MUTANT = Mutant(
    clause="C2",
    rows=("claim_order",),
    what="a claim ranks a lapsed lease by its lease deadline instead of its run_at (returned batch still sorted)",
)
