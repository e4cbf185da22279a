"""Mutant: the mem engine's ``release`` keeps the claim's attempt — breaks L2.

contract L2: a release gives the claim's attempt back, so a job handed back on
a graceful stop (or snoozed) never moves closer to its dead letter. This
engine's release is a retry with a delay: the attempt stays spent, and a job
with one attempt left, released, is then handed out past its ``max_attempts``.
The ``release`` row catches it.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class AttemptSpendingDriver(MemDriver):
    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        return await self.retry(queue, job_id, token, now, delay_s, None)


adapter = mem_mutant("mut-mem-release-spends-attempt", driver=AttemptSpendingDriver)
MUTANT = Mutant(
    clause="L2", rows=("release", "model_based"), what="mem release() keeps the claim's attempt spent, as retry() does"
)
