"""The engine adapter of the in-memory engine: what the conformance suite talks to."""

from __future__ import annotations

import uuid
from importlib.metadata import version

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store
from alkstore_mem import space as spaces
from alkstore_mem.store import MemStore


class MemAdapter:
    """Locations are space names in this process's registry.

    Declared capabilities: ``injectable_clock`` (every op reads only the store's
    clock) and ``shared_location`` (stores on one space share one state).
    Not ``multi_process`` (a space lives in one process's memory) and not
    ``durable`` (nothing outlives the process).
    """

    store_class: type[MemStore] = MemStore
    name = "mem"
    capabilities = frozenset({Capability.INJECTABLE_CLOCK, Capability.SHARED_LOCATION})

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
        store: Store = self.store_class(spaces.space_named(location), clock=clock, seed=seed)
        return store

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: counts the raw job tables of the space, without any store or queue code."""
        space = spaces.SPACES.get(location)
        return 0 if space is None else sum(len(index.jobs) for index in space.queues.values())

    async def drop_location(self, location: str) -> None:
        spaces.drop_space(location)
