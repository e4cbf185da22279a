"""Mutant: in the mem engine a key is held only while its job is ready — breaks K1.

A claim frees the key (as a queueing lock held "while queued" would), so a
second ``enqueue_unique`` made while the first job runs stores a duplicate
that a worker then runs beside it. The ``unique_keys`` and ``model_based`` rows catch it.
"""

from __future__ import annotations

from alkstore_mem import MemDriver
from alkstore_mem.record import READY, STATE, JobRecord

from tests.mutants.catalog import Mutant, mem_mutant


class FreedOnClaimDriver(MemDriver):
    @staticmethod
    def _holds_key(record: JobRecord) -> bool:
        return bool(record[STATE] == READY)


adapter = mem_mutant("mut-mem-unique-freed-on-claim", driver=FreedOnClaimDriver)
MUTANT = Mutant(
    clause="K1",
    rows=("unique_keys", "model_based"),
    what="mem enqueue_unique lets a claim free the key: only a ready job holds it",
)
