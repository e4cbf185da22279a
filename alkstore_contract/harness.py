"""What a row gets to work with: the engine, a fresh location, a clock it can move.

A ``RowContext`` lives for one row on one engine. It owns the locations it
creates and the stores it opens and releases all of them at teardown, inside
the same event loop that used them (a store never outlives its loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import TypeVar

from alkstore_contract.adapter import Capability, EngineAdapter
from alkstore_contract.checks import expect_instant
from alkstore_contract.clock import ManualClock
from alkstore_contract.surface import Store

T = TypeVar("T")

MANUAL_UNIT_S = 10.0
"""One "tick" of row time under the manual clock: large, since moving it costs nothing."""
SYSTEM_UNIT_S = 0.4
"""One tick on the real clock: small enough to keep rows quick, large enough to beat scheduling noise."""


class RowContext:
    """The engine under test, as one row sees it."""

    def __init__(
        self,
        *,
        adapter: EngineAdapter,
        engine_spec: str,
        manual: bool,
        seed: int,
        tolerance_s: float,
        examples: int,
    ) -> None:
        self.adapter = adapter
        self.engine_spec = engine_spec
        """How a child process finds the engine again (entry-point name or ``module:attr``)."""
        self.manual = manual
        self.seed = seed
        self.examples = examples
        self.clock: ManualClock | None = ManualClock() if manual else None
        self.tolerance_s = 0.0 if manual else tolerance_s
        """Slack for comparing instants: none under the manual clock."""
        self.unit_s = MANUAL_UNIT_S if manual else SYSTEM_UNIT_S
        self.notes: list[str] = []
        self._locations: list[str] = []
        self._stores: list[Store] = []
        self._location: str | None = None

    @property
    def location(self) -> str:
        """The row's main location, made at setup."""
        if self._location is None:
            raise RuntimeError("RowContext.setup() has not run")
        return self._location

    def has(self, capability: Capability) -> bool:
        """Whether the engine declares ``capability``."""
        return capability in self.adapter.capabilities

    def note(self, text: str) -> None:
        """Record something the report should say about this row (e.g. a leg not run, and why)."""
        self.notes.append(text)

    async def setup(self) -> None:
        self._location = await self.new_location()

    async def new_location(self) -> str:
        """A further fresh location, dropped at teardown."""
        location = await self.adapter.create_location()
        self._locations.append(location)
        return location

    async def open_store(self, location: str | None = None) -> Store:
        """A store on ``location`` (default: the row's), with the row's clock and seed; closed at teardown."""
        store = await self.adapter.open_store(
            location if location is not None else self.location,
            clock=self.clock,
            seed=self.seed + len(self._stores),
        )
        self._stores.append(store)
        return store

    def now(self) -> datetime:
        """The row's idea of now: the manual clock, or the host's clock."""
        return self.clock.now() if self.clock is not None else datetime.now(UTC)

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass: instantly under the manual clock, by sleeping on the real one."""
        if self.clock is not None:
            self.clock.advance(seconds)
        else:
            await asyncio.sleep(seconds)

    async def wait_until(self, instant: datetime) -> None:
        """Let time reach ``instant``: exactly under the manual clock; on the system clock, the tolerance past it."""
        margin = 0.0 if self.manual else self.tolerance_s
        await self.advance(max(0.0, (instant - self.now()).total_seconds() + margin))

    async def timed(self, operation: Awaitable[T]) -> tuple[T, datetime, datetime]:
        """Await ``operation`` between two reads of the row's clock (equal under the manual clock)."""
        before = self.now()
        result = await operation
        return result, before, self.now()

    def expect_during(self, actual: datetime | None, before: datetime, after: datetime, clause: str, what: str) -> None:
        """``actual`` must be the engine's now during an op timed by ``timed``: exactly under the manual clock."""
        half = (after - before) / 2
        expect_instant(actual, before + half, clause, what, tolerance_s=self.tolerance_s + half.total_seconds())

    async def stored_jobs(self, location: str | None = None) -> int:
        """The oracle's count of jobs at ``location``, read without the engine's code path."""
        return await self.adapter.count_stored_jobs(location if location is not None else self.location)

    def child_clock_arg(self) -> str:
        """How a child process should build its clock: ``system``, or the manual clock's instant, frozen."""
        return "system" if self.clock is None else self.clock.now().isoformat()

    async def teardown(self) -> None:
        for store in reversed(self._stores):
            await store.close()
        for location in reversed(self._locations):
            await self.adapter.drop_location(location)
