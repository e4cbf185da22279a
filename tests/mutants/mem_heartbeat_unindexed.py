"""Mutant: the in-memory engine's heartbeat moves the lease but not its index entry — breaks H3 (and C1).

The mem engine finds lapsed leases through a heap of ``(lease_expires_at, id,
version)`` entries; every change bumps the job's ``version``, which turns the
old entries stale. This heartbeat stores the new deadline and version but
forgets to file the new entry, so the job drops out of the index: once
its lease lapses no claim ever takes it again (until a heap rebuild), although
C1 makes it claimable. The job looks right in ``get_job`` and in ``handle.job``;
only a claim after heartbeat + lapse shows the fault: ``lease_validity`` checks
exactly that (citing H3), and ``model_based`` finds it in some of its random
programs (citing C1).
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import ID, as_timedelta, leased

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class UnindexedHeartbeatDriver(MemDriver):
    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        assert now is not None
        held = self._held(queue, job_id, token, now)
        if held is None:
            return False
        index, record = held
        index.jobs[record[ID]] = leased(record, now + as_timedelta(lease_s))  # not self._file_lease(...)
        return True


adapter = mem_mutant("mut-mem-heartbeat-unindexed", driver=UnindexedHeartbeatDriver)
MUTANT = Mutant(
    clause="H3",
    rows=("lease_validity", "model_based"),
    what="mem heartbeat() sets the new lease without filing it in the lease index, so the job is never reclaimed",
)
