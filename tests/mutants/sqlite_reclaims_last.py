"""Mutant: a claim takes every due ready job before any lapsed lease — breaks C2.

contract C2 orders ALL claimable jobs (C1: ready and due, or a lapsed lease with
attempts left) by priority, then ready time, then enqueue order; a reclaim
competes on its ready time like any other job. This engine fills a batch
with fresh ready jobs first and reclaims only with what room is left — a
tempting "two queries" design — so a job whose worker died waits behind
every later job of its priority and can starve. The handles still come back
sorted, so only WHICH jobs a size-limited claim takes is wrong: a row needs a
lapsed lease and a later ready job of equal priority competing for one slot,
which the ``model_based`` row's random programs produce.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

_MERGED = "SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed)\n    ORDER BY priority DESC, run_at, id"
_READY_FIRST = (
    "SELECT id FROM (SELECT *, 0 AS reclaim FROM ready UNION ALL SELECT *, 1 AS reclaim FROM lapsed)\n"
    "    ORDER BY reclaim, priority DESC, run_at, id"
)


adapter = sql_mutant("mut-sqlite-reclaims-last", "CLAIM_SQL", old=_MERGED, new=_READY_FIRST)
MUTANT = Mutant(
    clause="C2",
    rows=("model_based", "claim_order"),
    what="claims take every due ready job before any lapsed lease, instead of one C2 order over both",
)
