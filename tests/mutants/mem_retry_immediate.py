"""Mutant: the mem engine's retry makes the job ready at once, whatever the backoff — breaks R2 (family R)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemJobHandle
from alkstore_mem.record import JobRecord

from alkstore_contract.resolution import RetryOutcome
from tests.mutants.catalog import Mutant, mem_mutant


class ImpatientHandle(MemJobHandle):
    __slots__ = ()

    def _apply_retry(self, record: JobRecord, outcome: RetryOutcome, now: datetime) -> None:
        hurried = outcome if outcome.dead else RetryOutcome(dead=False, run_at=now, last_error=outcome.last_error)
        super()._apply_retry(record, hurried, now)


adapter = mem_mutant("mut-mem-retry-immediate", handle=ImpatientHandle)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="mem retry() ignores the backoff (and any delay): ready at once",
)
