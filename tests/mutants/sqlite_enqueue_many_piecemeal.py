"""Mutant: ``enqueue_many`` enqueues one payload at a time, each committed on its own — breaks E11.

Each payload is encoded only when its turn comes and stored by its own
auto-committed ``INSERT`` (with its own clock read), so a bad payload in the
middle of a batch raises after the payloads before it are already stored: half
a batch lands. ``enqueue_many_atomic``'s atomicity leg checks the oracle's count.

The kit encodes every payload of a batch before it calls the driver, so a
driver never meets the bad payload: a driver storing a batch piecemeal would
show only if storage failed half way, which no row provokes on SQLite. The
fault is in the queue the engine's store returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alkstore_sqlite import SqliteDriver

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.kit import KitQueue
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, sqlite_mutant


class PiecemealQueue(KitQueue[SqliteDriver]):
    async def enqueue_many(self, payloads: Sequence[object], **opts: Any) -> list[JobId]:
        self._store.check_open("enqueue_many")
        if not isinstance(payloads, list | tuple):
            raise InvalidArgument(f"payloads={type(payloads).__name__}: must be a list or tuple of payloads")
        return [await self.enqueue(payload, **opts) for payload in payloads]


adapter = sqlite_mutant("mut-sqlite-enqueue-many-piecemeal", queue=PiecemealQueue)
MUTANT = Mutant(
    clause="E11",
    rows=("enqueue_many_atomic",),
    what="enqueue_many() encodes and inserts payloads one at a time, each committed, so a bad one leaves half a batch",
)
