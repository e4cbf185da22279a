"""Mutant: ``claim_batch`` passes ``n`` straight to SQL's ``LIMIT`` — breaks C5.

In SQLite ``LIMIT -1`` means "no limit", so ``claim_batch(w, -1)`` claims the
whole queue: the extent guard (``n <= 0`` returns ``[]`` before any storage is
touched) is exactly what this engine forgets. The ``claim_extents`` row
catches it.
"""

from __future__ import annotations

import secrets

from alkstore_sqlite import SqliteJobHandle, SqliteQueue
from alkstore_sqlite.rows import claim_order_key, decode_job

from alkstore_contract.instants import to_epoch_us
from alkstore_contract.validation import validate_batch_size, validate_worker_id
from tests.mutants.catalog import Mutant, sqlite_mutant


class UnguardedQueue(SqliteQueue):
    async def _claim(self, op: str, worker_id: object, n: object) -> list[SqliteJobHandle]:
        self._db.check_open(op)
        params = {
            "queue": self.name,
            "now": to_epoch_us(self._db.now()),
            "worker_id": validate_worker_id(worker_id),
            "token": secrets.token_hex(16),
            "n": validate_batch_size(n),
        }
        rows = await self._db.fetch(op, self.CLAIM_SQL, params)
        rows.sort(key=claim_order_key)
        return [self.handle_class(self._db, decode_job(row), str(params["token"])) for row in rows]


adapter = sqlite_mutant("mut-sqlite-claim-batch-unguarded", queue=UnguardedQueue)
MUTANT = Mutant(
    clause="C5",
    rows=("claim_extents",),
    what="claim_batch(w, n) passes n to LIMIT unchecked, so n = -1 claims the whole queue",
)
