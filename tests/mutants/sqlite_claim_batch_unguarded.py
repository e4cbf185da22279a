"""Mutant: ``claim_batch`` passes ``n`` straight to SQL's ``LIMIT`` — breaks C5.

In SQLite ``LIMIT -1`` means "no limit", so ``claim_batch(w, -1)`` claims the
whole queue: the extent guard (``n <= 0`` returns ``[]`` before any storage is
touched) is exactly what this engine forgets. The ``claim_extents`` row
catches it.

The guard is the kit's (``KitQueue._claim``), before the driver is called, so
no driver ever sees ``n <= 0``: the fault is in the queue the engine's store
returns, which hands ``n`` to the driver unchecked. The driver's ``LIMIT :n``
does the rest.
"""

from __future__ import annotations

import secrets

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitJobHandle, KitQueue, c2_order_key
from alkstore_contract.validation import validate_batch_size, validate_worker_id
from tests.mutants.catalog import Mutant, sqlite_mutant


class UnguardedQueue(KitQueue[SqliteDriver]):
    async def _claim(self, op: str, worker_id: object, n: object) -> list[KitJobHandle[SqliteDriver]]:
        store = self._store
        store.check_open(op)
        worker = validate_worker_id(worker_id)
        token = secrets.token_hex(16)
        jobs = await store.driver.claim(self.name, worker, validate_batch_size(n), token, store.now())
        jobs.sort(key=c2_order_key)
        return [KitJobHandle(self, job, token) for job in jobs]


adapter = sqlite_mutant("mut-sqlite-claim-batch-unguarded", queue=UnguardedQueue)
MUTANT = Mutant(
    clause="C5",
    rows=("claim_extents",),
    what="claim_batch(w, n) passes n to LIMIT unchecked, so n = -1 claims the whole queue",
)
