"""Mutant: ``retry()`` on the last attempt dead-letters with ``fail()``'s default string — breaks R4.

A retry that runs out of attempts without an error stores ``"failed"`` (one
default string shared by every way a job dies) instead of ``"max attempts
exceeded"``. The kit sends both that retry and ``fail()`` to the driver's one
``dead_letter``; this driver rewrites the exhausted retry's string there. A
retry WITH an error, ``fail()`` and the sweep (which gets its strings through
``sweep``) are untouched, so only a row that retries a job on its last attempt
without an error sees it: ``dead_letter``'s R4 leg.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_sqlite import SqliteDriver

from alkstore_contract.resolution import LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, sqlite_mutant


class OneDefaultDriver(SqliteDriver):
    """Rewrites the dead-letter string of an exhausted retry just before the statement runs."""

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        if last_error == LAST_ERROR_MAX_ATTEMPTS:
            last_error = LAST_ERROR_FAILED
        return await super().dead_letter(queue, job_id, token, now, last_error)


adapter = sqlite_mutant("mut-sqlite-retry-exhausted-says-failed", driver=OneDefaultDriver)
MUTANT = Mutant(
    clause="R4",
    rows=("dead_letter",),
    what='retry() without an error on the last attempt stores last_error "failed", not "max attempts exceeded"',
)
