"""Mutant: the backoff always waits the full cap, with no jitter — breaks R5.

contract R2/R5: the delay is uniform over ``[cap/2, cap]`` and the jitter really
spreads. This store's random source answers every draw with the top of the
range, so every delay is a valid point of the curve, yet all the jobs of a
failed batch come back at one instant (the thundering herd the jitter exists to
prevent). The ``backoff_curve_equivalence`` row catches it when 200 first
retries never land in the lower half of ``[300, 600]``.

The random source is the kit's (``KitStore.rng``), which no driver sees: the
fault is in the engine's store, ``SqliteStore``.
"""

from __future__ import annotations

import random

from alkstore_sqlite import SqliteStore

from tests.mutants.catalog import Mutant, sqlite_mutant


class TopOfRangeRandom(random.Random):
    """A random source whose every ``uniform(a, b)`` is ``b``."""

    def uniform(self, a: float, b: float) -> float:
        return b


class NoJitterStore(SqliteStore):
    @property
    def rng(self) -> random.Random:
        return TopOfRangeRandom()


adapter = sqlite_mutant("mut-sqlite-backoff-no-jitter", store=NoJitterStore)
MUTANT = Mutant(
    clause="R5", rows=("backoff_curve_equivalence",), what="retry() without a delay always waits the cap: no jitter"
)
