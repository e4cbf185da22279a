"""Mutant: handle ops still succeed at exactly ``lease_expires_at`` — breaks H1 at its boundary.

H1's predicate is ``now < lease_expires_at``: at the deadline itself the lease
has lapsed (C1 makes the job reclaimable at ``lease_expires_at <= now``), so
an op of the old holder and a reclaim could both win at that instant. This
engine fences with ``lease_expires_at >= :now``. On the real clock no op ever
lands on the exact microsecond, so only a leg run under a manual clock sees it:
on a system-clock run, ``lease_validity``'s "H1 boundary" leg runs on a
manual-clock twin of the engine (it declares ``injectable_clock``) and catches
it there; the certificate must say NOT CERTIFIED on both clocks.
"""

from __future__ import annotations

from alkstore_sqlite.driver import FENCE

from tests.mutants.catalog import Mutant, mutated, sql_mutant

_FENCE_AT_DEADLINE = mutated(FENCE, "lease_expires_at > :now", "lease_expires_at >= :now")


adapter = sql_mutant(
    "mut-sqlite-handle-at-deadline",
    "ACK_SQL",
    "RETRY_READY_SQL",
    "DEAD_LETTER_SQL",
    "HEARTBEAT_SQL",
    old=FENCE,
    new=_FENCE_AT_DEADLINE,
)
MUTANT = Mutant(
    clause="H1",
    rows=("lease_validity",),
    what="ack/retry/fail/heartbeat succeed at exactly lease_expires_at (>= in the fence), run on the system clock",
    clock="system",
)
