"""Mutant: the claim ignores ``expires_at`` — breaks X1.

contract X1: a job with ``expires_at <= now`` is never handed out, ready or as a
lapsed lease. This engine's claim has no expiry filter, so work past its
deadline still runs until a sweep moves it to dead. The ``claim_order`` row
catches it with a job enqueued with ``expires=0``.
"""

from __future__ import annotations

from alkstore_sqlite.driver import NOT_EXPIRED

from tests.mutants.catalog import Mutant, sql_mutant

FILTER = f"AND {NOT_EXPIRED}"


adapter = sql_mutant("mut-sqlite-expired-claimable", "CLAIM_SQL", old=FILTER, new="")
MUTANT = Mutant(
    clause="X1",
    rows=("claim_order",),
    what="the claim has no expiry filter: jobs with expires_at <= now are handed out",
)
