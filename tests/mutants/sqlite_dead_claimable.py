"""Mutant: the claim's first arm takes every job that is not ``processing`` — dead jobs come back — breaks D2.

The arm meant for ready jobs reads ``state != 'processing'`` instead of
``state = 'ready'``: a dead job, whose ``run_at`` is long past, is handed out
again as if it were ready. ``dead_letter``'s D2 leg claims from queues holding
only dead jobs and catches it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

READY_ARM = "state = 'ready' AND run_at <= :now"


adapter = sql_mutant(
    "mut-sqlite-dead-claimable", "CLAIM_SQL", old=READY_ARM, new="state != 'processing' AND run_at <= :now"
)
MUTANT = Mutant(
    clause="D2",
    rows=("dead_letter",),
    what="the claim hands out dead jobs (its ready arm matches state != 'processing')",
)
