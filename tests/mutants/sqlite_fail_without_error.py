"""Mutant: ``fail()`` without an error leaves ``last_error`` empty — breaks D1.

The handle passes the caller's ``error`` straight to the dead-letter statement
instead of ``fail_error(error)``, so ``fail()`` stores ``NULL`` where D1 pins
``"failed"``. ``fail("reason")``, retries and the sweep are untouched:
``dead_letter``'s D1 leg catches it.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteJobHandle
from alkstore_sqlite.database import Params

from alkstore_contract.resolution import LAST_ERROR_FAILED
from tests.mutants.catalog import Mutant, sqlite_mutant


class NoDefaultHandle(SqliteJobHandle):
    """Drops the default string of ``fail()`` just before the statement runs."""

    async def _fenced(self, op: str, sql: str, params: Params, now_us: int) -> bool:
        if op == "fail" and params.get("last_error") == LAST_ERROR_FAILED:
            params = {**params, "last_error": None}
        return await super()._fenced(op, sql, params, now_us)


adapter = sqlite_mutant("mut-sqlite-fail-without-error", handle=NoDefaultHandle)
MUTANT = Mutant(
    clause="D1",
    rows=("dead_letter",),
    what='fail() without an error stores last_error None instead of "failed"',
)
