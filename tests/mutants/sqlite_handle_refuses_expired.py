"""Mutant: handle ops refuse a job that expired while its lease still runs — breaks H1.

contract H1's validity predicate is the job being ``processing``, held by this very
claim, and ``now < lease_expires_at`` — nothing else. Expiry (X1) only stops a
job from being handed out, and the sweep (X2) dead-letters it; until then the
worker holding it may still ack, retry, fail or heartbeat. This engine adds
``expires_at > now`` to the fence of every handle statement, so a worker that
finished a job a moment after its expiry gets ``False`` from ``ack()``, and the
job it completed is dead-lettered as "expired" by the next sweep. A row sees it
only with a job that expires between its claim and its lease end, and a handle
op in that window: ``lease_validity`` sets one up on purpose, ``model_based``'s
deadline moves land there by chance.
"""

from __future__ import annotations

from alkstore_sqlite.driver import FENCE

from tests.mutants.catalog import Mutant, sql_mutant

_FENCE_UNEXPIRED = f"{FENCE} AND (expires_at IS NULL OR expires_at > :now)"


adapter = sql_mutant(
    "mut-sqlite-handle-refuses-expired",
    "ACK_SQL",
    "RETRY_READY_SQL",
    "DEAD_LETTER_SQL",
    "HEARTBEAT_SQL",
    old=FENCE,
    new=_FENCE_UNEXPIRED,
)
MUTANT = Mutant(
    clause="H1",
    rows=("lease_validity", "model_based"),
    what="ack/retry/fail/heartbeat return False once expires_at <= now, although the lease still runs",
)
