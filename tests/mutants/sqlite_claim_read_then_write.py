"""Mutant: a claim reads the candidates, yields, then marks them — breaks C4.

The claim is two statements with an ``await`` between them and no
transaction: two workers can both read the same ready job before either marks
it, and both get a handle. Each check looks fine alone; only concurrent
workers expose it. ``exactly_once``'s history checker reports the duplicated
handouts.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

from alkstore_sqlite import SqliteDriver
from alkstore_sqlite.columns import JOB_COLUMN_LIST, decode_job

from alkstore_contract.types import Job
from tests.mutants.catalog import Mutant, sqlite_mutant

PICK_SQL = """
SELECT id FROM jobs
WHERE queue = :queue AND state = 'ready' AND run_at <= :now AND (expires_at IS NULL OR expires_at > :now)
ORDER BY priority DESC, run_at, id
LIMIT :n
"""
MARK_SQL = f"""
UPDATE jobs
SET state = 'processing', attempts = attempts + 1, claimed_by = :worker_id, token = :token,
    lease_expires_at = :now + visibility_timeout_us
WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING {JOB_COLUMN_LIST}
"""


class ReadThenWriteDriver(SqliteDriver):
    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        now_us = self._epoch_us(self._now(now))
        picked = await self.db.fetch(PICK_SQL, {"queue": queue, "now": now_us, "n": n})
        await asyncio.sleep(0.001)
        ids = json.dumps([row[0] for row in picked])
        rows = await self.db.fetch(MARK_SQL, {"ids": ids, "now": now_us, "worker_id": worker_id, "token": token})
        return [decode_job(row) for row in rows]


adapter = sqlite_mutant("mut-sqlite-claim-read-then-write", driver=ReadThenWriteDriver)
MUTANT = Mutant(
    clause="C4",
    rows=("exactly_once",),
    what="a claim selects, yields, then updates by id: concurrent workers get the same job",
)
