"""Mutant: in the mem engine a dead job keeps holding its key — breaks K2.

contract K2: a job's key is free again once the job is acked, dead or
cancelled. Here a dead letter goes on holding it, so after one failure the key
can never be enqueued again until someone deletes the dead job. The
``unique_keys`` and ``model_based`` rows catch it.
"""

from __future__ import annotations

from alkstore_mem import MemDriver
from alkstore_mem.record import JobRecord

from tests.mutants.catalog import Mutant, mem_mutant


class HeldByDeadDriver(MemDriver):
    @staticmethod
    def _holds_key(record: JobRecord) -> bool:
        return True


adapter = mem_mutant("mut-mem-unique-held-by-dead", driver=HeldByDeadDriver)
MUTANT = Mutant(
    clause="K2", rows=("unique_keys", "model_based"), what="mem enqueue_unique: a dead job keeps holding its key"
)
