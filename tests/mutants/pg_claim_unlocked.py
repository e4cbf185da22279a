"""Mutant: the Postgres claim selects its candidates without locking them, then updates them by row address — G1, G2.

The engine's claim picks up to n claimable rows ``FOR UPDATE SKIP LOCKED``
and updates exactly those by ``ctid``. Without the lock two concurrent claims
pick the same rows; the second UPDATE waits for the first to commit, then
re-checks its ``WHERE`` against the row's new version (READ COMMITTED), whose
``ctid`` is no longer the one it picked: the row is skipped. So no job is
handed out twice (C4 holds), but a claim that raced another returns nothing,
or less than it could, while jobs are claimable, and a worker that stops at
an empty claim leaves jobs behind. The ``progress`` row catches it.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_postgres import PgDriver

from tests.mutants.catalog import Mutant, mutated, postgres_mutant


class UnlockedClaimDriver(PgDriver):
    CLAIM_SQL: ClassVar[str] = mutated(PgDriver.CLAIM_SQL, "    FOR UPDATE SKIP LOCKED\n", "")


adapter = postgres_mutant("mut-pg-claim-unlocked", driver=UnlockedClaimDriver)
MUTANT = Mutant(
    clause="G1",
    rows=("progress",),
    what="the Postgres claim selects candidates without FOR UPDATE SKIP LOCKED, then updates them by ctid",
)
