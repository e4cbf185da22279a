"""Mutant: the mem engine's ``release`` ignores its delay — breaks L3.

contract L3: a job released with a delay is claimable at now + delay and not
before (a snooze). This engine files every released job ready at once, so a
worker that snoozed a job to wait for something gets it straight back. The
``release`` row catches it.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class DelayIgnoringDriver(MemDriver):
    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        return await super().release(queue, job_id, token, now, 0.0)


adapter = mem_mutant("mut-mem-release-ignores-delay", driver=DelayIgnoringDriver)
MUTANT = Mutant(
    clause="L3", rows=("release", "model_based"), what="mem release() files the job ready at once, whatever its delay"
)
