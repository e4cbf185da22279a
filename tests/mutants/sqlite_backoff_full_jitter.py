"""Mutant: the backoff draws over ``[0, cap]`` (full jitter) — breaks R2.

contract R2: equal jitter, ``d`` uniform over ``[cap/2, cap]``: half the delay is
guaranteed. This engine's random source widens every draw to ``[0, cap]``, so
half the retries come back sooner than the curve allows (some at once). The
``backoff_curve_equivalence`` row catches it when a delay falls below ``cap/2``.
"""

from __future__ import annotations

import random

from aiosqlite import Connection
from alkstore_sqlite.database import SqliteDatabase

from alkstore_contract.clock import Clock
from tests.mutants.catalog import Mutant, sqlite_mutant


class FromZeroRandom(random.Random):
    """A random source whose every ``uniform(a, b)`` is drawn over ``[0, b]``."""

    def uniform(self, a: float, b: float) -> float:
        return super().uniform(0.0, b)


class FullJitterDatabase(SqliteDatabase):
    def __init__(self, conn: Connection, *, location: str, clock: Clock, rng: random.Random) -> None:
        super().__init__(conn, location=location, clock=clock, rng=FromZeroRandom(rng.getrandbits(64)))


adapter = sqlite_mutant("mut-sqlite-backoff-full-jitter", database=FullJitterDatabase)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="retry() without a delay draws over [0, cap] (full jitter) instead of [cap/2, cap]",
)
