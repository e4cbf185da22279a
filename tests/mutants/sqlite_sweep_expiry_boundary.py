"""Mutant: the sweep expires a job only once ``expires_at < now``, so a sweep AT the expiry instant misses it.

contract X2 (and X1): a job with ``expires_at <= now`` is expired. The claim path
keeps the right boundary, so the job is never handed out at that instant; only
the sweep is off by one tick, which a row must sweep at exactly ``expires_at``
to see: ``sweep_and_retention`` does (and ``dead_letter`` and
``batch_ack_and_cancel`` happen to), and ``model_based`` lands its clock on
expiry instants and sweeps there.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

adapter = sql_mutant(
    "mut-sqlite-sweep-expiry-boundary", "SWEEP_EXPIRE_SQL", old="expires_at <= :now", new="expires_at < :now"
)
MUTANT = Mutant(
    clause="X2",
    rows=("model_based", "sweep_and_retention"),
    what="sweep_expired() moves a job to dead only when expires_at < now, not at expires_at == now",
)
