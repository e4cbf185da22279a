"""Mutant: the mem engine's ``enqueue_unique`` looks for the key's holder, yields, then inserts — breaks K3.

A check and an insert that are not one step: between them another caller
(another task, store or process) makes the same check, finds no holder either,
and both insert. The check alone is right, so a single caller never sees it;
the ``unique_keys`` row's races catch it.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class CheckThenInsertDriver(MemDriver):
    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        holder = self._key_holder(queue, unique_key)
        if holder is not None:
            return holder, False
        await asyncio.sleep(0)  # the round trip between a SELECT and an INSERT
        return await self._insert_keyed(queue, unique_key, jobs, now), True


adapter = mem_mutant("mut-mem-unique-check-then-insert", driver=CheckThenInsertDriver)
MUTANT = Mutant(
    clause="K3",
    rows=("unique_keys",),
    what="mem enqueue_unique checks for the key's holder, yields, then inserts: concurrent callers both insert",
)
