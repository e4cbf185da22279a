"""Mutant: the claim's first arm takes every job that is not ``processing`` — dead jobs come back — breaks D2.

The arm meant for ready jobs reads ``state != 'processing'`` instead of
``state = 'ready'``: a dead job, whose ``run_at`` is long past, is handed out
again as if it were ready. ``dead_letter``'s D2 leg claims from queues holding
only dead jobs and catches it.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, mutated, sqlite_mutant

READY_ARM = "state = 'ready' AND run_at <= :now"


class DeadClaimableDriver(SqliteDriver):
    CLAIM_SQL: ClassVar[str] = mutated(SqliteDriver.CLAIM_SQL, READY_ARM, "state != 'processing' AND run_at <= :now")


adapter = sqlite_mutant("mut-sqlite-dead-claimable", driver=DeadClaimableDriver)
MUTANT = Mutant(
    clause="D2",
    rows=("dead_letter",),
    what="the claim hands out dead jobs (its ready arm matches state != 'processing')",
)
