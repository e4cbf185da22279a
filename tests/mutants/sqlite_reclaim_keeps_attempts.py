"""Mutant: taking over a lapsed lease does not count an attempt — breaks C3.

contract C3: every claim, a reclaim included, runs ``attempts += 1``: a job whose
workers keep dying holding it must run out of attempts (C7). This engine counts
first claims only, so such a job is handed out for ever. The ``lease_validity``
row catches it when a reclaimed job shows the attempts of its first claim.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

COUNTED = "attempts = attempts + 1"
FIRST_CLAIMS_ONLY = "attempts = CASE WHEN state = 'processing' THEN attempts ELSE attempts + 1 END"


adapter = sql_mutant("mut-sqlite-reclaim-keeps-attempts", "CLAIM_SQL", old=COUNTED, new=FIRST_CLAIMS_ONLY)
MUTANT = Mutant(
    clause="C3",
    rows=("lease_validity",),
    what="a reclaim of a lapsed lease leaves attempts unchanged instead of attempts + 1",
)
