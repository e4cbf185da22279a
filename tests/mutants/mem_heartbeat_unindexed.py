"""Mutant: the in-memory engine's heartbeat moves the lease but not its index entry — breaks H3 (and C1).

The mem engine finds lapsed leases through a heap of ``(lease_expires_at, id,
version)`` entries; every change bumps the job's ``version``, which turns the
old entries stale. This heartbeat sets the new deadline and bumps the version
but forgets to file the new entry, so the job drops out of the index: once
its lease lapses no claim ever takes it again (until a heap rebuild), although
C1 makes it claimable. The job looks right in ``get_job`` and in ``handle.job``;
only a claim after heartbeat + lapse shows the fault: ``lease_validity`` checks
exactly that (citing H3), and ``model_based`` finds it in some of its random
programs (citing C1).
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemAdapter, MemJobHandle, MemQueue, MemStore
from alkstore_mem.record import JobRecord, as_timedelta

from tests.mutants.catalog import Mutant


class UnindexedHeartbeatHandle(MemJobHandle):
    __slots__ = ()

    def _apply_heartbeat(self, record: JobRecord, seconds: float, now: datetime) -> None:
        record.lease_expires_at = now + as_timedelta(seconds)  # no index.file_lease(...)
        record.version += 1


class UnindexedHeartbeatQueue(MemQueue):
    handle_class: type[MemJobHandle] = UnindexedHeartbeatHandle


class UnindexedHeartbeatStore(MemStore):
    queue_class: type[MemQueue] = UnindexedHeartbeatQueue


class UnindexedHeartbeatAdapter(MemAdapter):
    store_class: type[MemStore] = UnindexedHeartbeatStore
    name = "mut-mem-heartbeat-unindexed"


adapter = UnindexedHeartbeatAdapter()
MUTANT = Mutant(
    clause="H3",
    rows=("lease_validity", "model_based"),
    what="mem heartbeat() sets the new lease without filing it in the lease index, so the job is never reclaimed",
)
