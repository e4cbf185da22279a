"""Mutant: ``retry()`` on the last attempt dead-letters with ``fail()``'s default string — breaks R4.

A retry that runs out of attempts without an error stores ``"failed"`` (one
default string shared by every way a job dies) instead of ``"max attempts
exceeded"``. A retry WITH an error, ``fail()`` and the sweep are untouched, so
only a row that retries a job on its last attempt without an error sees it:
``dead_letter``'s R4 leg.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteJobHandle
from alkstore_sqlite.database import Params

from alkstore_contract.resolution import LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from tests.mutants.catalog import Mutant, sqlite_mutant


class OneDefaultHandle(SqliteJobHandle):
    """Rewrites the dead-letter string of an exhausted retry just before the statement runs."""

    async def _fenced(self, op: str, sql: str, params: Params, now_us: int) -> bool:
        if op == "retry" and params.get("last_error") == LAST_ERROR_MAX_ATTEMPTS:
            params = {**params, "last_error": LAST_ERROR_FAILED}
        return await super()._fenced(op, sql, params, now_us)


adapter = sqlite_mutant("mut-sqlite-retry-exhausted-says-failed", handle=OneDefaultHandle)
MUTANT = Mutant(
    clause="R4",
    rows=("dead_letter",),
    what='retry() without an error on the last attempt stores last_error "failed", not "max attempts exceeded"',
)
