"""The SQLite engine keeping every instant at whole milliseconds, and saying so: it must be certified.

An engine that stores instants as milliseconds (a ``timestamp(3)`` column, a
JavaScript ``Date``) keeps the contract if it does so consistently and
declares it: ``time_resolution_us = 1000``. Its driver floors the ``now`` of
every op to the millisecond, and every instant it stores too. The suite
compares instants to within the declared resolution and the certificate says
``time resolution 1 ms``. ``tests/mutants/sqlite_millisecond_instants.py`` is
the same engine declaring nothing (so 1 µs): it must not be certified.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alkstore_sqlite import SqliteAdapter, SqliteDriver

from alkstore_contract.instants import to_epoch_us

MS_US = 1000


class MillisecondDriver(SqliteDriver):
    """``SqliteDriver`` whose op instants and stored instants are floored to the millisecond."""

    def _now(self, now: datetime | None) -> datetime:
        at = super()._now(now)
        return at.replace(microsecond=at.microsecond // MS_US * MS_US)

    def _epoch_us(self, instant: datetime) -> int:
        return to_epoch_us(instant) // MS_US * MS_US


def millisecond_adapter(name: str, *, declare: bool) -> Any:
    """The millisecond SQLite engine named ``name``; ``declare``: whether its adapter says 1 ms."""
    attributes: dict[str, Any] = {"driver_class": MillisecondDriver, "name": name}
    if declare:
        attributes["time_resolution_us"] = MS_US
    return type("MillisecondAdapter", (SqliteAdapter,), attributes)()


adapter = millisecond_adapter("sqlite-ms", declare=True)
