"""Mutant: the mem engine hands out the LOWEST priority first — breaks C2 (clause family C)."""

from __future__ import annotations

from alkstore_mem import MemDriver
from alkstore_mem.record import ID, PRIORITY, RUN_AT, JobRecord
from alkstore_mem.space import c2_key

from tests.mutants.catalog import Mutant, mem_mutant


class LowFirstDriver(MemDriver):
    def _order_key(self, record: JobRecord) -> int:
        return c2_key(record[PRIORITY], record[RUN_AT], record[ID])


adapter = mem_mutant("mut-mem-priority-reversed", driver=LowFirstDriver)
MUTANT = Mutant(clause="C2", rows=("claim_order",), what="mem claims order priority ascending")
