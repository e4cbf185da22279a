"""Mutant: the store keeps one connection for good and never replaces it — breaks N2.

contract N2 (recovery without reopening): after an outage the same open store
serves again within a bound. This driver opens one connection of its own on
first use (with the engine's timeouts) and runs every statement on it, one at
a time; once an outage has broken it, every op raises ``StoreUnavailable``
until the store is reopened. The ``network_faults`` row's partition and
server-gone legs catch it, and ``network_history`` once its faults are over.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Self

import asyncpg
from alkstore_postgres import PgDriver
from alkstore_postgres.location import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_OP_TIMEOUT_S

from tests.mutants.catalog import Mutant, postgres_mutant


class OneConnectionDriver(PgDriver):
    _dsn = ""
    _timeouts: tuple[float, float] = (DEFAULT_OP_TIMEOUT_S, DEFAULT_CONNECT_TIMEOUT_S)
    _connection: Any = None
    _lock: asyncio.Lock | None = None

    @classmethod
    async def open(cls, dsn: str, **kwargs: Any) -> Self:
        driver = await super().open(dsn, **kwargs)
        driver._dsn = dsn
        driver._timeouts = (
            kwargs.get("op_timeout_s", DEFAULT_OP_TIMEOUT_S),
            kwargs.get("connect_timeout_s", DEFAULT_CONNECT_TIMEOUT_S),
        )
        return driver

    async def _fetch(self, sql: str, *args: object) -> list[Any]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._connection is None:
                op_timeout_s, connect_timeout_s = self._timeouts
                self._connection = await asyncpg.connect(
                    self._dsn, timeout=connect_timeout_s, command_timeout=op_timeout_s
                )
            rows: list[Any] = await self._connection.fetch(sql, *args)
        return rows

    async def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._connection.close(), 1.0)
        await super().close()


adapter = postgres_mutant("mut-pg-never-reconnects", driver=OneConnectionDriver)
MUTANT = Mutant(
    clause="N2",
    rows=("network_faults", "network_history"),
    what="the store runs every statement on one connection of its own and never replaces it once an outage broke it",
)
