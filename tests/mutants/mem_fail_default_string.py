"""Mutant: the mem engine's ``fail()`` without an error stores "FAILED" — breaks D1 (family D)."""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemJobHandle
from alkstore_mem.record import JobRecord

from alkstore_contract.resolution import LAST_ERROR_FAILED
from tests.mutants.catalog import Mutant, mem_mutant


class ShoutingHandle(MemJobHandle):
    __slots__ = ()

    def _apply_fail(self, record: JobRecord, last_error: str, now: datetime) -> None:
        super()._apply_fail(record, "FAILED" if last_error == LAST_ERROR_FAILED else last_error, now)


adapter = mem_mutant("mut-mem-fail-default-string", handle=ShoutingHandle)
MUTANT = Mutant(clause="D1", rows=("dead_letter",), what='mem fail() without an error stores "FAILED", not "failed"')
