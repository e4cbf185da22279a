"""Mutant: the in-memory engine's index rebuild forgets every lease — breaks C1 after the clock goes back.

The mem engine's heaps assume time moves forward; when a store reads an
earlier ``now`` than the last (two hosts' clocks a little apart, a
``ManualClock.set`` back), ``_rebuild`` files every job again from ``jobs``.
This rebuild files ready, delayed, expiring and dead jobs but not the leases of
processing ones: a lease that lapsed before the clock went back is never
claimed again, though C1 makes it claimable. ``claim_order``'s leg "leases
lapsed before the clock went back" (manual clock) sees only the delayed job
handed out.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.space import QueueIndex

from tests.mutants.catalog import Mutant, mem_mutant


class LeaseForgettingRebuildDriver(MemDriver):
    def _rebuild(self, index: QueueIndex, now: datetime) -> None:
        super()._rebuild(index, now)
        index.leases = []


adapter = mem_mutant("mut-mem-rebuild-forgets-leases", driver=LeaseForgettingRebuildDriver)
MUTANT = Mutant(
    clause="C1",
    rows=("claim_order",),
    what="mem's index rebuild (the clock went back) drops every lease entry, so lapsed leases are never reclaimed",
)
