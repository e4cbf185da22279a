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
from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.kit import KitStore
from alkstore_contract.surface import Store

from .driver import LOCATIONS, DictDriver, Location

DISTRIBUTION = "alkstore-example-dict"


class DictAdapter:
    """Locations are names in this process's ``LOCATIONS``.

    Declared capabilities, and why:

    - ``injectable_clock`` (T2): the driver uses only the ``now`` the kit read
      from the store's clock, so the suite can move a ``ManualClock`` instead of sleeping.
    - ``shared_location`` (P1): stores opened on one name share one ``Location``.
    - ``release`` (L1–L4, contract 2.1): the driver has ``release``, a fenced update like ``retry``'s.

    Not ``multi_process`` (a dict lives in one process) and not ``durable``
    (nothing survives the process): the rows that need those skip, naming them.
    """

    driver_class: type[DictDriver] = DictDriver
    """The storage the stores run on: a test can put a deliberately broken subclass here to see a row catch it."""
    name = "example-dict"
    capabilities = frozenset({Capability.INJECTABLE_CLOCK, Capability.SHARED_LOCATION, Capability.RELEASE})

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
        """A kit store over a driver on ``location`` (created empty when unknown).

        The engine has no clock of its own, so ``clock=None`` means the system
        clock; the kit reads it once per op and hands the instant to the driver.
        """
        driver = self.driver_class(LOCATIONS.setdefault(location, Location()))
        return KitStore(driver, clock=clock if clock is not None else SystemClock(), seed=seed)

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: the size of the location's dict, read without any store, queue or driver code.

        Every job stored here is ready, processing or dead: an ack deletes, so
        there is no finished history to leave out of the count.
        """
        found = LOCATIONS.get(location)
        return 0 if found is None else len(found.rows)

    async def drop_location(self, location: str) -> None:
        LOCATIONS.pop(location, None)
