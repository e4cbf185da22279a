"""Mutant: ``release`` spends its handle before it checks its delay — breaks L4.

contract L4: a bad ``delay`` is ``InvalidArgument`` naming ``delay``, raised
before the handle is spent, and the job is unchanged. This handle spends
first: a release with a negative or NaN delay raises ``InvalidArgument`` and
leaves the handle spent, so the worker can no longer release, ack, retry or
fail the job it still holds; it waits out its lease instead. The ``release``
row's leg "one-shot, bad delay" catches it: its second bad delay meets
``HandleSpent`` where ``InvalidArgument`` is due.

Handles are the kit's (a driver only sees a checked delay), so the fault is
in the handle the engine's claims return.
"""

from __future__ import annotations

from typing import cast

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitJobHandle, ReleasingDriver
from alkstore_contract.types import Duration
from alkstore_contract.validation import optional_duration_seconds
from tests.mutants.catalog import Mutant, sqlite_mutant


class EarlySpendHandle(KitJobHandle[SqliteDriver]):
    __slots__ = ()

    async def release(self, delay: Duration | None = None) -> bool:
        queue = self._queue
        store = queue._store
        store.check_open("release")
        self._one_shot().spend("release")
        delay_s = optional_duration_seconds("delay", delay)
        releasing = cast(ReleasingDriver, queue._driver)
        return await releasing.release(queue._name, self._job.id, self._token, store.now(), delay_s or 0.0)


adapter = sqlite_mutant("mut-sqlite-release-spends-early", handle=EarlySpendHandle)
MUTANT = Mutant(
    clause="L4",
    rows=("release",),
    what="release() spends the handle before checking its delay: a refused delay leaves the claim unusable",
)
