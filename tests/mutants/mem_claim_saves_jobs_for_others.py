"""Mutant: the mem claim keeps one job back for every other worker it has seen on the queue — breaks G2.

A "fair share" claim: when no more jobs are claimable than there are other
workers it knows of (every worker that ever claimed on the queue, in any store
on the space), it returns nothing, leaving them one job each. Workers that
stopped are never forgotten, so in a drain whose workers stop at their first
empty claim the last jobs are left for no one. It gives up only with fewer jobs
left than workers, which G1's count allows (N − 1 other claims may have taken
a job not yet counted); G2, every job handed out, does not. A lone worker
never meets it. The ``progress`` row catches it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.types import Job
from tests.mutants.catalog import Mutant, mem_mutant

SEEN: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
"""The workers that claimed on each (space, queue): shared by every store on the space, never forgotten."""


class SavesJobsForOthersDriver(MemDriver):
    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        seen = SEEN[(self.space.name, queue)]
        seen.add(worker_id)
        others = len(seen) - 1
        if others and self._claimable(queue, now) <= others:
            return []
        return await super().claim(queue, worker_id, n, token, now)

    def _claimable(self, queue: str, now: datetime | None) -> int:
        assert now is not None, "a mem store is always opened with a clock"
        return sum(1 for record in self.space.index(queue).jobs.values() if self._is_claimable(record, now))


adapter = mem_mutant("mut-mem-claim-saves-jobs-for-others", driver=SavesJobsForOthersDriver)
MUTANT = Mutant(
    clause="G2",
    rows=("progress",),
    what="mem claims return nothing while no more jobs are claimable than other workers ever seen on the queue",
)
