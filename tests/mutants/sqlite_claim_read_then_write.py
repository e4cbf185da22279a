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
import secrets

from alkstore_sqlite import SqliteJobHandle, SqliteQueue
from alkstore_sqlite.rows import JOB_COLUMN_LIST, claim_order_key, decode_job

from alkstore_contract.instants import to_epoch_us
from alkstore_contract.validation import validate_batch_size, validate_worker_id
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


class ReadThenWriteQueue(SqliteQueue):
    async def _claim(self, op: str, worker_id: object, n: object) -> list[SqliteJobHandle]:
        self._db.check_open(op)
        worker = validate_worker_id(worker_id)
        count = validate_batch_size(n)
        if count <= 0:
            return []
        now = to_epoch_us(self._db.now())
        picked = await self._db.fetch(op, PICK_SQL, {"queue": self.name, "now": now, "n": count})
        await asyncio.sleep(0.001)
        token = secrets.token_hex(16)
        ids = json.dumps([row[0] for row in picked])
        params = {"ids": ids, "now": now, "worker_id": worker, "token": token}
        rows = await self._db.fetch(op, MARK_SQL, params)
        rows.sort(key=claim_order_key)
        return [self.handle_class(self._db, decode_job(row), token) for row in rows]


adapter = sqlite_mutant("mut-sqlite-claim-read-then-write", queue=ReadThenWriteQueue)
MUTANT = Mutant(
    clause="C4",
    rows=("exactly_once",),
    what="a claim selects, yields, then updates by id: concurrent workers get the same job",
)
