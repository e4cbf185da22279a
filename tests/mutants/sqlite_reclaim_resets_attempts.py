"""Mutant: a reclaim restarts the attempt count at 1 instead of consuming an attempt — breaks C3.

A first claim counts as it should (``attempts + 1``), but taking over a lapsed
lease writes ``attempts = 1``: a job whose workers keep crashing never runs out
of attempts and never reaches the dead letters. The ``crash_recovery`` row
catches it when the reclaimed job shows attempts 1 instead of 2.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

COUNTED = "attempts = attempts + 1"
RESET = "attempts = CASE WHEN state = 'processing' THEN 1 ELSE attempts + 1 END"


adapter = sql_mutant("mut-sqlite-reclaim-resets-attempts", "CLAIM_SQL", old=COUNTED, new=RESET)
MUTANT = Mutant(
    clause="C3", rows=("crash_recovery",), what="a reclaim of a lapsed lease sets attempts to 1 instead of attempts + 1"
)
