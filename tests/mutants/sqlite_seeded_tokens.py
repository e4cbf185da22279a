"""Mutant: claim tokens drawn from the store's seeded random source — breaks H5 across stores.

contract H5: after a lapse and a reclaim, the old handle's ops return False.
The kit mints each claim's token from the OS's randomness; this queue draws it
from ``store.rng``, the ``random.Random`` seeded through ``open_store(...,
seed=)`` for the backoff jitter (R5). Two stores opened with one seed on one
location then mint the same tokens in the same order, and a stale handle of
one store fences a reclaim of the other: ``lease_validity``'s leg "tokens of
two stores opened with one seed" sees the old ``ack`` return True.
"""

from __future__ import annotations

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitQueue
from tests.mutants.catalog import Mutant, sqlite_mutant


class SeededTokenQueue(KitQueue[SqliteDriver]):
    def _mint_token(self) -> str:
        return f"{self._store.rng.getrandbits(128):032x}"


adapter = sqlite_mutant("mut-sqlite-seeded-tokens", queue=SeededTokenQueue)
MUTANT = Mutant(
    clause="H5",
    rows=("lease_validity",),
    what="claim tokens come from the store's seeded random source, so two stores opened with one seed share them",
)
