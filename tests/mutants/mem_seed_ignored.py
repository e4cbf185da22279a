"""Mutant: the mem store seeds its random source from the system, not from ``open_store(seed=)`` — breaks R5.

contract R5: each store owns a ``random.Random``, seeded through
``open_store(..., seed=)`` so a run can be replayed. This store takes the
seed and drops it: its jitter still spreads and every delay is in range, so
only two stores opened with one seed and driven alike tell: their delays
differ. ``backoff_curve_equivalence``'s seed leg sees it.
"""

from __future__ import annotations

from alkstore_mem import MemAdapter

from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store
from tests.mutants.catalog import Mutant


class SeedIgnoredAdapter(MemAdapter):
    name = "mut-mem-seed-ignored"

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        return await super().open_store(location, clock=clock, seed=None)


adapter = SeedIgnoredAdapter()
MUTANT = Mutant(
    clause="R5",
    rows=("backoff_curve_equivalence",),
    what="open_store(seed=) is ignored: the store's random.Random is seeded from the system",
)
