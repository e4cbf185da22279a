"""Mutant: among jobs of one priority and ready time, the newest is claimed first — breaks C2.

contract C2's last key is enqueue order ASC. This engine's claim breaks ties by
``id DESC`` (LIFO), so of two jobs due at the same instant the later one runs
first. (The kit still sorts the handles, so a batch that takes every tied job
looks right; successive ``claim_one`` calls do not.) The
``claim_order`` row catches it on jobs sharing a run_at.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

FIFO = "ORDER BY priority DESC, run_at, id"
LIFO = "ORDER BY priority DESC, run_at, id DESC"


adapter = sql_mutant("mut-sqlite-fifo-broken", "CLAIM_SQL", old=FIFO, new=LIFO)
MUTANT = Mutant(
    clause="C2", rows=("claim_order",), what="ties of priority and ready time are claimed newest first (id DESC)"
)
