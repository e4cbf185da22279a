"""Mutant: ``fail()`` without an error leaves ``last_error`` empty — breaks D1.

The kit resolves ``fail()``'s default (``"failed"``) and hands it to the
driver's ``dead_letter``, which stores ``NULL`` in its place: ``fail()`` ends
with no ``last_error`` where D1 pins ``"failed"``. ``fail("reason")``, retries
that run out and the sweep are untouched: ``dead_letter``'s D1 leg catches it.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_sqlite import SqliteDriver

from alkstore_contract.resolution import LAST_ERROR_FAILED
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, sqlite_mutant


class NoDefaultDriver(SqliteDriver):
    """Drops the default string of ``fail()`` just before the statement runs."""

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        if last_error != LAST_ERROR_FAILED:
            return await super().dead_letter(queue, job_id, token, now, last_error)
        params = {"last_error": None}
        return await self._fenced(self.DEAD_LETTER_SQL, params, job_id, token, self._now(now))


adapter = sqlite_mutant("mut-sqlite-fail-without-error", driver=NoDefaultDriver)
MUTANT = Mutant(
    clause="D1", rows=("dead_letter",), what='fail() without an error stores last_error None instead of "failed"'
)
