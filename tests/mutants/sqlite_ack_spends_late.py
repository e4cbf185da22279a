"""Mutant: ``ack`` marks its handle spent only after the storage call returns — breaks H4 under a race.

contract H4 and DEC-order-of-checks: the handle is marked spent just before
the storage op is awaited, so two ops racing on one handle cannot both run.
This handle checks, awaits the driver's ack, and only then spends: a
``retry`` or ``fail`` started while the ack is in flight passes the check and
runs too. Ops one after another still see a spent handle, so only
``lease_validity``'s leg "one-shot ops started together" catches it.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitJobHandle
from tests.mutants.catalog import Mutant, sqlite_mutant


class LateSpendHandle(KitJobHandle[SqliteDriver]):
    __slots__ = ()

    async def ack(self) -> bool:
        queue = self._queue
        store = queue._store
        store.check_open("ack")
        self._one_shot().check("ack")
        acked = await queue._driver.ack(queue._name, self._job.id, self._token, store.now())
        self._one_shot().spend("ack")
        return acked


adapter = sqlite_mutant("mut-sqlite-ack-spends-late", handle=LateSpendHandle)
MUTANT = Mutant(
    clause="H4",
    rows=("lease_validity",),
    what="ack() marks the handle spent after its storage call returns, so a retry or fail racing it runs too",
)
