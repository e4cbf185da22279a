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
from alkstore_mem.record import JobRecord
from alkstore_mem.space import QueueIndex

from tests.mutants.catalog import Mutant, mem_mutant


class AttemptSpendingDriver(MemDriver):
    def _file_release(self, index: QueueIndex, record: JobRecord, run_at: datetime) -> None:
        self._file_retry(index, record, run_at, None)


adapter = mem_mutant("mut-mem-release-spends-attempt", driver=AttemptSpendingDriver)
MUTANT = Mutant(
    clause="L2", rows=("release", "model_based"), what="mem release() keeps the claim's attempt spent, as retry() does"
)
