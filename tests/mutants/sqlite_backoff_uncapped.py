"""Mutant: the backoff keeps doubling past one hour — breaks R2.

contract R2: ``cap = min(b · 2^(a−1), 3600 s)``, and no overflow for any attempt.
This engine leaves out the ``min``: from attempt 12 on base 5 s a retry waits
more than an hour, and by attempt 40 the delay no longer fits a duration at
all. The ``backoff_curve_equivalence`` row's cap leg catches it, on either clock.

The curve is drawn by the kit's handle (``decide_retry``) before the driver is
called; the driver gets the delay alone and cannot tell a drawn one from one
the caller gave. So the fault is in the handle the engine's claims return: it
draws its own, uncapped delay and hands it on as if the caller had given it.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitJobHandle
from alkstore_contract.types import Duration
from tests.mutants.catalog import Mutant, sqlite_mutant


class UncappedHandle(KitJobHandle[SqliteDriver]):
    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        if delay is None:
            top = self.job.backoff_base_s * 2.0 ** (self.job.attempts - 1)
            delay = self._queue._store.rng.uniform(top / 2, top)
        return await super().retry(error, delay)


adapter = sqlite_mutant("mut-sqlite-backoff-uncapped", handle=UncappedHandle)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="retry() without a delay omits the one-hour cap: base · 2^(a−1) grows without bound",
    clock="system",
)
