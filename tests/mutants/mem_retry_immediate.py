"""Mutant: the mem engine's retry makes the job ready at once, whatever the backoff — breaks R2 (family R)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class ImpatientDriver(MemDriver):
    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        return await super().retry(queue, job_id, token, now, 0.0, last_error)


adapter = mem_mutant("mut-mem-retry-immediate", driver=ImpatientDriver)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="mem retry() ignores the backoff (and any delay): ready at once",
)
