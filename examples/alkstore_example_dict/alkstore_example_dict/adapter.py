"""The engine adapter: what the alkstore conformance suite talks to (``alkstore_contract.adapter.EngineAdapter``).

The suite never imports the engine: it loads this object through the
``alkstore.engines`` entry point, asks it for fresh locations, opens stores on
them with the clock and seed it wants, and reads the oracle to check what is
really stored.
"""

from __future__ import annotations

import uuid
from importlib.metadata import version

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store

from .location import LOCATIONS, Location
from .store import DictStore

DISTRIBUTION = "alkstore-example-dict"


class DictAdapter:
    """Locations are names in this process's ``LOCATIONS``.

    Declared capabilities, and why:

    - ``injectable_clock`` (T2): every op reads time only from the store's clock,
      so the suite can move a ``ManualClock`` instead of sleeping.
    - ``shared_location`` (P1): stores opened on one name share one ``Location``.

    Not ``multi_process`` (a dict lives in one process) and not ``durable``
    (nothing survives the process): the rows that need those skip, naming them.
    """

    store_class: type[DictStore] = DictStore
    name = "example-dict"
    capabilities = frozenset({Capability.INJECTABLE_CLOCK, Capability.SHARED_LOCATION})

    @property
    def version(self) -> str:
        """The engine's distribution version, as the report shows it."""
        return version(DISTRIBUTION)

    async def unavailable_reason(self) -> str | None:
        """Always available: the engine needs nothing but the interpreter."""
        return None

    async def create_location(self) -> str:
        """A fresh, empty location under a name no other call returns."""
        name = f"example-dict-{uuid.uuid4().hex}"
        LOCATIONS[name] = Location()
        return name

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A store on ``location`` (created empty when unknown); ``clock=None`` is the system clock."""
        store: Store = self.store_class(LOCATIONS.setdefault(location, Location()), clock=clock, seed=seed)
        return store

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: the size of the location's dict, read without any store, queue or handle code."""
        found = LOCATIONS.get(location)
        return 0 if found is None else len(found.jobs)

    async def drop_location(self, location: str) -> None:
        LOCATIONS.pop(location, None)
