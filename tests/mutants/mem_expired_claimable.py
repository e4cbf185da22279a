"""Mutant: the mem engine hands out expired jobs — breaks X1 (clause family X)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import ATTEMPTS, LEASE_EXPIRES_AT, MAX_ATTEMPTS, PROCESSING, READY, RUN_AT, STATE, JobRecord

from tests.mutants.catalog import Mutant, mem_mutant


class ExpiryBlindDriver(MemDriver):
    def _is_claimable(self, record: JobRecord, now: datetime) -> bool:
        if record[STATE] == READY:
            return bool(record[RUN_AT] <= now)
        lease = record[LEASE_EXPIRES_AT]
        exhausted = record[ATTEMPTS] >= record[MAX_ATTEMPTS]
        return record[STATE] == PROCESSING and lease is not None and lease <= now and not exhausted


adapter = mem_mutant("mut-mem-expired-claimable", driver=ExpiryBlindDriver)
MUTANT = Mutant(clause="X1", rows=("claim_order", "sweep_and_retention"), what="mem claims ignore expires_at")
