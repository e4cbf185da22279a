"""The SQLite engine keeping every instant at whole milliseconds, and saying so: it must be certified.

An engine that stores instants as milliseconds (a ``timestamp(3)`` column, a
JavaScript ``Date``) keeps the contract if it does so consistently and
declares it: ``time_resolution_us = 1000``. Every op reads the clock floored
to the millisecond and every instant it stores is floored too. The suite
compares instants to within the declared resolution and the certificate says
``time resolution 1 ms``. ``tests/mutants/sqlite_millisecond_instants.py`` is
the same engine declaring nothing (so 1 µs): it must not be certified.

The floor of stored instants replaces ``to_epoch_us`` in the SQLite engine's
modules, for the whole process: certify it in a process of its own
(``tests/test_time_resolution.py`` does), never beside another SQLite engine.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alkstore_sqlite import SqliteAdapter, SqliteStore
from alkstore_sqlite.database import SqliteDatabase

from alkstore_contract.clock import Clock
from alkstore_contract.instants import to_epoch_us
from alkstore_contract.surface import Store
from tests.mutants.patching import patch

MS_US = 1000


def to_epoch_ms_as_us(instant: datetime) -> int:
    """Epoch microseconds of ``instant`` floored to the millisecond."""
    return to_epoch_us(instant) // MS_US * MS_US


class MillisecondDatabase(SqliteDatabase):
    def now(self) -> datetime:
        now = super().now()
        return now.replace(microsecond=now.microsecond // MS_US * MS_US)


class MillisecondStore(SqliteStore):
    database_class = MillisecondDatabase


def millisecond_adapter(name: str, *, declare: bool) -> Any:
    """The millisecond SQLite engine named ``name``; ``declare``: whether its adapter says 1 ms."""

    class MillisecondAdapter(SqliteAdapter):
        store_class = MillisecondStore

        async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
            patch("alkstore_sqlite.queue", "to_epoch_us", to_epoch_ms_as_us)
            patch("alkstore_sqlite.handle", "to_epoch_us", to_epoch_ms_as_us)
            return await super().open_store(location, clock=clock, seed=seed)

    MillisecondAdapter.name = name  # type: ignore[assignment]
    if declare:
        MillisecondAdapter.time_resolution_us = MS_US  # type: ignore[attr-defined]
    return MillisecondAdapter()


adapter = millisecond_adapter("sqlite-ms", declare=True)
