"""Mutant: the mem engine hands out the LOWEST priority first — breaks C2 (clause family C)."""

from __future__ import annotations

from alkstore_mem import MemDriver
from alkstore_mem.record import JobRecord
from alkstore_mem.space import OrderKey

from alkstore_contract.instants import to_epoch_us
from tests.mutants.catalog import Mutant, mem_mutant


class LowFirstDriver(MemDriver):
    def _order_key(self, record: JobRecord) -> OrderKey:
        return (record.priority, to_epoch_us(record.run_at), record.id)


adapter = mem_mutant("mut-mem-priority-reversed", driver=LowFirstDriver)
MUTANT = Mutant(clause="C2", rows=("claim_order",), what="mem claims order priority ascending")
