"""Mutant: the claim takes the LOWEST priority first — breaks C2.

contract C2: priority DESC, then ready time ASC, then enqueue order ASC. This
engine's claim orders by ``priority ASC``, so urgent work waits behind the
backlog. (The kit still sorts the handles, so a batch that takes the whole
queue looks right; successive ``claim_one`` calls do not.) The
``claim_order`` row catches it in the order of successive claims.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

RIGHT = "ORDER BY priority DESC"
REVERSED = "ORDER BY priority ASC"


adapter = sql_mutant("mut-sqlite-priority-reversed", "CLAIM_SQL", old=RIGHT, new=REVERSED)
MUTANT = Mutant(
    clause="C2", rows=("claim_order",), what="the claim orders by priority ASC: the lowest priority is handed out first"
)
