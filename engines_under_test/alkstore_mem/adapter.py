"""The engine adapter of the in-memory engine: what the conformance suite talks to."""

from __future__ import annotations

import uuid
from importlib.metadata import version

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.surface import Store
from alkstore_mem import space as spaces
from alkstore_mem.driver import MemDriver
from alkstore_mem.store import MemStore


class MemAdapter:
    """Locations are space names in this process's registry.

    Declared capabilities: ``injectable_clock`` (every op reads only the store's
    clock), ``shared_location`` (stores on one space share one state),
    ``release`` (L1–L4) and ``unique_keys`` (K1–K4).
    Not ``multi_process`` (a space lives in one process's memory) and not
    ``durable`` (nothing outlives the process).
    """

    driver_class: type[MemDriver] = MemDriver
    """The storage the stores run on (the project's broken-engine mutants put a subclass here)."""
    name = "mem"
    capabilities = frozenset(
        {Capability.INJECTABLE_CLOCK, Capability.SHARED_LOCATION, Capability.RELEASE, Capability.UNIQUE_KEYS}
    )

    @property
    def version(self) -> str:
        return version("alkstore")

    async def unavailable_reason(self) -> str | None:
        """Always available: the engine needs nothing but the interpreter."""
        return None

    async def create_location(self) -> str:
        """A fresh empty space with a name no other call returns."""
        name = f"alkstore-mem-{uuid.uuid4().hex}"
        spaces.space_named(name)
        return name

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        driver = self.driver_class(spaces.space_named(location))
        return MemStore(driver, clock=clock if clock is not None else SystemClock(), seed=seed)

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: counts the raw job tables of the space, without any store or queue code."""
        space = spaces.SPACES.get(location)
        return 0 if space is None else sum(len(index.jobs) for index in space.queues.values())

    async def drop_location(self, location: str) -> None:
        spaces.drop_space(location)
