"""Mutant: the in-memory engine's heartbeat on a last attempt files the new lease but not the sweep's watch — breaks X2.

The mem engine's sweep looks only at jobs whose watched instant has come
(``alkstore_mem.space``): a claim on a last attempt watches its lease, so the
sweep dead-letters it once it lapses (C7). This heartbeat files the new
lease for the claims but does not watch it: the sweep that pops the claim's
old deadline finds the lease still live and lets the job go, and no later
sweep ever looks at it again, although its new lease lapses with no attempt
left. ``get_job`` and claims look right; only a sweep between the two
deadlines and one after the second shows it: the ``sweep_and_retention``
row's leg "heartbeat on the last attempt, then a lapse" does exactly that.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import ID, LEASE_EXPIRES_AT, as_timedelta, leased

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class UnwatchedHeartbeatDriver(MemDriver):
    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        assert now is not None
        held = self._held(queue, job_id, token, now)
        if held is None:
            return False
        index, record = held
        index.lease_dropped(record)
        renewed = leased(record, now + as_timedelta(lease_s))
        index.jobs[renewed[ID]] = renewed
        index.file_lease(renewed, renewed[LEASE_EXPIRES_AT])  # not self._file_lease(...), which also watches
        return True


adapter = mem_mutant("mut-mem-heartbeat-last-attempt-unwatched", driver=UnwatchedHeartbeatDriver)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention",),
    what="mem heartbeat() on a last attempt files the new lease but not the sweep's watch: it never dies",
)
