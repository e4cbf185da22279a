"""Mutant: the backoff draws over ``[0, cap]`` (full jitter) — breaks R2.

contract R2: equal jitter, ``d`` uniform over ``[cap/2, cap]``: half the delay is
guaranteed. This store's random source widens every draw to ``[0, cap]``, so
half the retries come back sooner than the curve allows (some at once). The
``backoff_curve_equivalence`` row catches it when a delay falls below ``cap/2``.

The random source is the kit's (``KitStore.rng``, read by every retry), not
the driver's: no driver sees a draw, only the delay it gave. So the fault is
in the engine's store, ``SqliteStore``.
"""

from __future__ import annotations

import random

from alkstore_sqlite import SqliteDriver, SqliteStore

from alkstore_contract.clock import Clock
from tests.mutants.catalog import Mutant, sqlite_mutant


class FromZeroRandom(random.Random):
    """A random source whose every ``uniform(a, b)`` is drawn over ``[0, b]``."""

    def uniform(self, a: float, b: float) -> float:
        return super().uniform(0.0, b)


class FullJitterStore(SqliteStore):
    def __init__(self, driver: SqliteDriver, *, clock: Clock | None, seed: int | None) -> None:
        super().__init__(driver, clock=clock, seed=seed)
        self._from_zero = FromZeroRandom(seed)

    @property
    def rng(self) -> random.Random:
        return self._from_zero


adapter = sqlite_mutant("mut-sqlite-backoff-full-jitter", store=FullJitterStore)
MUTANT = Mutant(
    clause="R2",
    rows=("backoff_curve_equivalence",),
    what="retry() without a delay draws over [0, cap] (full jitter) instead of [cap/2, cap]",
)
