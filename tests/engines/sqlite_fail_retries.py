"""The SQLite engine with two library-like differences, each durable: P3 must pass on it, D1 and B2 must fail.

Part of the tests.

Some real libraries differ from the contract in what an op does, not in what
they keep: a ``fail()`` that schedules another attempt rather than killing the
job, a ``cancel`` that cannot take a job a worker is running. This engine does
both (``fail()`` and the exhausting retry leave the job ready with the error;
``cancel`` of a processing job returns ``False`` and changes nothing) and
commits every write as the SQLite engine does. P3 asks whether what the engine
showed it committed survives a close, a kill -9 and a reopen, so the
``durability`` row must pass it; the differences are D1's and B2's
(``tests/test_durability_judges_commits.py``).
"""

from __future__ import annotations

from datetime import datetime

from alkstore_sqlite import SqliteAdapter, SqliteDriver

from alkstore_contract.types import JobId, JobState


class FailRetriesDriver(SqliteDriver):
    """``SqliteDriver`` whose dead-lettering retries at once, and whose cancel leaves a processing job alone."""

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        return await self.retry(queue, job_id, token, now, 0.0, last_error)

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        job = await self.get(queue, job_id)
        if job is not None and job.state == JobState.PROCESSING:
            return False
        return await super().cancel(queue, job_id)


class FailRetriesAdapter(SqliteAdapter):
    name = "sqlite-fail-retries"
    driver_class = FailRetriesDriver


adapter = FailRetriesAdapter()
