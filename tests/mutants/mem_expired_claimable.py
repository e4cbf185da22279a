"""Mutant: the mem engine hands out expired jobs — breaks X1 (clause family X)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import JobRecord

from alkstore_contract.types import JobState
from tests.mutants.catalog import Mutant, mem_mutant


class ExpiryBlindDriver(MemDriver):
    def _is_claimable(self, record: JobRecord, now: datetime) -> bool:
        if record.state is JobState.READY:
            return record.run_at <= now
        lease = record.lease_expires_at
        return (
            record.state is JobState.PROCESSING
            and lease is not None
            and lease <= now
            and record.attempts < record.max_attempts
        )


adapter = mem_mutant("mut-mem-expired-claimable", driver=ExpiryBlindDriver)
MUTANT = Mutant(clause="X1", rows=("claim_order", "sweep_and_retention"), what="mem claims ignore expires_at")
