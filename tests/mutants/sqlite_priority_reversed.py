"""Mutant: the claim takes the LOWEST priority first — breaks C2.

contract C2: priority DESC, then ready time ASC, then enqueue order ASC. This
engine's claim orders by ``priority ASC``, so urgent work waits behind the
backlog. (The kit still sorts the handles, so a batch that takes the whole
queue looks right; successive ``claim_one`` calls do not.) The
``claim_order`` row catches it in the order of successive claims.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, mutated, sqlite_mutant

RIGHT = "ORDER BY priority DESC"
REVERSED = "ORDER BY priority ASC"


class LowFirstDriver(SqliteDriver):
    CLAIM_SQL: ClassVar[str] = mutated(SqliteDriver.CLAIM_SQL, RIGHT, REVERSED)


adapter = sqlite_mutant("mut-sqlite-priority-reversed", driver=LowFirstDriver)
MUTANT = Mutant(
    clause="C2",
    rows=("claim_order",),
    what="the claim orders by priority ASC: the lowest priority is handed out first",
)
