"""What every program of one ``model_based`` run shares: the engine, its location, the clock, the loop, the tally.

Part of the suite.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from alkstore_contract.adapter import EngineAdapter
from alkstore_contract.clock import ManualClock
from alkstore_contract.surface import Store


@dataclass
class Tally:
    """How far a run reached, for the row's note: a run that never reaches the cap proves nothing about it."""

    range_checks: int = 0
    """Retries without delay whose ready time was checked against R2's range."""
    cap_hits: int = 0
    """Those of them where ``b·2^(a−1)`` reached the 3600 s cap."""
    top_attempts: int = 0
    """The highest attempt count ``a`` a range check saw."""
    full_states: int = 0
    """Whole-state comparisons: every job the program knows read back, and the oracle's raw count."""

    def range_checked(self, attempts: int, capped: bool) -> None:
        self.range_checks += 1
        self.cap_hits += capped
        self.top_attempts = max(self.top_attempts, attempts)

    def describe(self) -> str:
        return (
            f"R2 range checks: {self.range_checks} ({self.cap_hits} at the 3600 s cap, highest attempts "
            f"{self.top_attempts}); full-state comparisons: {self.full_states}"
        )


@dataclass
class Bench:
    """The run's engine and location, the clock, the seed and the thread's event loop."""

    adapter: EngineAdapter
    engine_spec: str
    location: str
    clock: ManualClock
    seed: int
    runner: asyncio.Runner
    programs: int = 0
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    """Part of every queue name, so two runs on one location never share a queue."""
    first_violation: str | None = None
    """The first failure's message, kept for when Hypothesis cannot replay it (see ``runner.run_programs``)."""
    start: datetime = field(init=False)
    """Where the clock stands when each program starts: programs must not depend on what ran before."""
    shared: Store | None = None
    tally: Tally = field(default_factory=Tally)
    slack: timedelta = timedelta(0)
    """How far from the exact instant the engine may keep one (``Model.slack``)."""
    releases: bool = False
    """The engine declares ``release`` (L1–L4): programs then draw ``release`` among the handle ops."""
    unique_keys: bool = False
    """The engine declares ``unique_keys`` (K1–K4): programs then draw ``enqueue_unique`` among the enqueues."""

    def shared_store(self) -> Store:
        """The store the programs share until one fails (opening a store per program costs Postgres dearly).

        From the first failure on, every program opens a store of its own with the run's
        seed, so the shrunk program the row prints replays exactly — backoff jitter
        included — on a fresh store opened with that seed.
        """
        if self.shared is None:
            self.shared = self.open_store()
        return self.shared

    def open_store(self) -> Store:
        """A fresh store on the location, with the row's clock and seed."""
        return self.runner.run(self._open())

    async def _open(self) -> Store:
        return await self.adapter.open_store(self.location, clock=self.clock, seed=self.seed)

    def stored_jobs(self) -> int:
        """The oracle's raw count of jobs at the location (every program's), read without the engine's code."""
        return self.runner.run(self.adapter.count_stored_jobs(self.location))

    def close(self) -> None:
        """Close the shared store (each program closes its own)."""
        if self.shared is not None:
            self.runner.run(self.shared.close())

    def __post_init__(self) -> None:
        self.start = self.clock.now()
