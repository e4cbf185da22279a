"""Mutant: the mem engine's ``fail()`` without an error stores "FAILED" — breaks D1 (family D)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver

from alkstore_contract.resolution import LAST_ERROR_FAILED
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mem_mutant


class ShoutingDriver(MemDriver):
    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        shouted = "FAILED" if last_error == LAST_ERROR_FAILED else last_error
        return await super().dead_letter(queue, job_id, token, now, shouted)


adapter = mem_mutant("mut-mem-fail-default-string", driver=ShoutingDriver)
MUTANT = Mutant(clause="D1", rows=("dead_letter",), what='mem fail() without an error stores "FAILED", not "failed"')
