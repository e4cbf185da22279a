"""Mutant: a lapsed lease is reclaimed even when its attempts are spent — breaks C7.

The claim's lapsed arm lost its ``attempts < max_attempts`` guard, so a job
whose worker died on its last attempt is handed out again (attempts beyond
``max_attempts``) instead of waiting for the sweep to dead-letter it. The
``crash_recovery`` row catches it on its ``max_attempts=1`` queue.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

GUARD = "AND attempts < max_attempts "


adapter = sql_mutant("mut-sqlite-reclaim-exhausted", "CLAIM_SQL", old=GUARD, new="")
MUTANT = Mutant(
    clause="C7",
    rows=("crash_recovery",),
    what="the claim reclaims lapsed leases whose attempts are spent (no attempts < max_attempts guard)",
)
