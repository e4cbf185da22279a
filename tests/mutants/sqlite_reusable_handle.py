"""Mutant: ``ack``/``retry``/``fail`` do not spend the handle — breaks H4.

contract H4: once one of them has returned, any further op on the handle raises
``HandleSpent`` and touches no storage. This engine's handles never spend, so a
second ``ack`` quietly returns False and a handle kept past a ``retry(delay=0)``
goes on issuing statements against the job. The ``lease_validity`` row catches
it by expecting ``HandleSpent``.

Handles are the kit's (``KitJobHandle`` keeps them one-shot, and a driver only
sees the fenced statements), so the fault is in the handle the engine's
claims return.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteDriver

from alkstore_contract.handles import OneShot
from alkstore_contract.kit import KitJobHandle, KitQueue
from alkstore_contract.types import Job
from tests.mutants.catalog import Mutant, sqlite_mutant


class NeverSpent(OneShot):
    """A one-shot guard that lets every op through."""

    __slots__ = ()

    def check(self, op: str) -> None:
        return None

    def spend(self, op: str) -> None:
        return None


class ReusableHandle(KitJobHandle[SqliteDriver]):
    def __init__(self, queue: KitQueue[SqliteDriver], job: Job, token: str) -> None:
        super().__init__(queue, job, token)
        self._once = NeverSpent(job.id)


adapter = sqlite_mutant("mut-sqlite-reusable-handle", handle=ReusableHandle)
MUTANT = Mutant(
    clause="H4",
    rows=("lease_validity",),
    what="ack/retry/fail never spend the handle: later ops run (and return False) instead of raising HandleSpent",
)
