"""Mutant: the in-memory engine files no lease entry for a reclaim — breaks C1 (a lease lapsing twice).

The mem engine finds lapsed leases through a heap of ``(lease_expires_at, id,
version)`` entries (``alkstore_mem.space``). This driver files the entry of a
first claim but forgets it when the claim is a reclaim (the job was
``processing``, its lease lapsed): the job is stored with its new lease, and
the last attempt is still watched by the sweep, but once the reclaim's lease
lapses no claim takes the job again, though C1 makes it claimable.
``claim_order``'s leg "a lease lapsing twice is reclaimed twice" sees the
third claim hand out nothing.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import (
    ATTEMPTS,
    ID,
    LEASE_EXPIRES_AT,
    MAX_ATTEMPTS,
    PROCESSING,
    STATE,
    VISIBILITY_TIMEOUT_S,
    JobRecord,
    as_timedelta,
    taken,
)
from alkstore_mem.space import QueueIndex

from tests.mutants.catalog import Mutant, mem_mutant


class UnindexedReclaimDriver(MemDriver):
    def _take(self, index: QueueIndex, record: JobRecord, worker_id: str, token: str, now: datetime) -> JobRecord:
        if record[STATE] != PROCESSING:
            return super()._take(index, record, worker_id, token, now)
        reclaimed = taken(record, worker_id, token, now + as_timedelta(record[VISIBILITY_TIMEOUT_S]))
        index.jobs[reclaimed[ID]] = reclaimed
        if reclaimed[ATTEMPTS] >= reclaimed[MAX_ATTEMPTS]:
            index.watch(reclaimed[LEASE_EXPIRES_AT], reclaimed[ID])
        return reclaimed


adapter = mem_mutant("mut-mem-reclaim-lease-unindexed", driver=UnindexedReclaimDriver)
MUTANT = Mutant(
    clause="C1",
    rows=("claim_order",),
    what="mem files no lease entry for a reclaim, so a reclaim's lapsed lease is never claimed again",
)
