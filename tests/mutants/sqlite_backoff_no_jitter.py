"""Mutant: the backoff always waits the full cap, with no jitter — breaks R5.

contract R2/R5: the delay is uniform over ``[cap/2, cap]`` and the jitter really
spreads. This engine's random source answers every draw with the top of the
range, so every delay is a valid point of the curve, yet all the jobs of a
failed batch come back at one instant (the thundering herd the jitter exists to
prevent). The ``backoff_curve_equivalence`` row catches it when 200 first
retries never land in the lower half of ``[5, 10]``.
"""

from __future__ import annotations

import random

from alkstore_sqlite.database import SqliteDatabase

from tests.mutants.catalog import Mutant, sqlite_mutant


class TopOfRangeRandom(random.Random):
    """A random source whose every ``uniform(a, b)`` is ``b``."""

    def uniform(self, a: float, b: float) -> float:
        return b


class NoJitterDatabase(SqliteDatabase):
    @property
    def rng(self) -> random.Random:
        return TopOfRangeRandom()


adapter = sqlite_mutant("mut-sqlite-backoff-no-jitter", database=NoJitterDatabase)
MUTANT = Mutant(
    clause="R5",
    rows=("backoff_curve_equivalence",),
    what="retry() without a delay always waits the cap: no jitter",
)
