"""The Postgres engine's own SQL through bare asyncpg connections, one per worker.

Each path runs exactly the statements the engine runs — ``PgDriver``'s SQL,
rendered for the location's schema, with the same parameters (the server's
clock: ``$1`` is NULL) — and nothing else but the JSON encoding and decoding
of payloads. Each worker has its own connection, so there is no pool to
acquire from and no reset on release: the driver's own limit. asyncpg
prepares each statement once per connection and caches it, as it does for
the engine.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import asyncpg
from alkstore_postgres.driver import PgDriver
from alkstore_postgres.location import Location, quote_ident
from alkstore_postgres.statements import render

from alkstore_contract.suite.registry import load_adapter
from bench.engines import QUEUE
from bench.workload import Driver, Payload


def _encode(item: Payload) -> str:
    return json.dumps(item, separators=(",", ":"))


class AsyncpgDriver:
    """The engine's statements on bare asyncpg connections, one per worker; ``close`` drops a schema it owns."""

    def __init__(self, location: str, dsn: str, schema: str, first: Any, *, owns_location: bool = True) -> None:
        self._location = location
        self._owns_location = owns_location
        self._dsn = dsn
        self._conns: list[Any] = [first]
        self._insert = render(PgDriver.INSERT_SQL, schema)
        self._claim = render(PgDriver.CLAIM_SQL, schema)
        self._ack = render(PgDriver.ACK_SQL, schema)
        self._ack_batch = render(PgDriver.ACK_BATCH_SQL, schema)
        self._count = f"SELECT count(*) FROM {quote_ident(schema)}.jobs"

    async def _insert_rows(self, worker: int, texts: list[str]) -> None:
        await self._conns[worker].fetch(self._insert, None, QUEUE, 0, 3, None, 0, None, 300.0, 5.0, None, texts)

    async def enqueue(self, worker: int, item: Payload) -> None:
        await self._insert_rows(worker, [_encode(item)])

    async def enqueue_many(self, worker: int, items: list[Payload]) -> None:
        await self._insert_rows(worker, [_encode(item) for item in items])

    async def claim_one_ack(self, worker: int) -> int:
        conn = self._conns[worker]
        token = secrets.token_hex(16)
        rows = await conn.fetch(self._claim, None, QUEUE, 1, f"w{worker}", token)
        if not rows:
            return 0
        json.loads(rows[0]["payload"])
        if not await conn.fetch(self._ack, None, rows[0]["id"], token):
            raise RuntimeError("raw ack failed")
        return 1

    async def claim_batch_ack(self, worker: int, n: int) -> int:
        conn = self._conns[worker]
        rows = await conn.fetch(self._claim, None, QUEUE, n, f"w{worker}", secrets.token_hex(16))
        if not rows:
            return 0
        for row in rows:
            json.loads(row["payload"])
        acked: int = await conn.fetchval(self._ack_batch, None, QUEUE, sorted(row["id"] for row in rows))
        return acked

    async def warm_up(self, workers: int) -> None:
        while len(self._conns) < workers:
            self._conns.append(await asyncpg.connect(self._dsn))

    async def stored(self) -> int:
        count: int = await self._conns[0].fetchval(self._count)
        return count

    async def close(self) -> None:
        for conn in self._conns:
            await conn.close()
        if self._owns_location:
            await load_adapter("postgres").drop_location(self._location)


async def open_asyncpg() -> Driver:
    """A fresh schema laid out by the engine's adapter, and a first connection to it."""
    location = await load_adapter("postgres").create_location()
    parsed = Location.decode(location)
    return AsyncpgDriver(location, parsed.dsn, parsed.schema, await asyncpg.connect(parsed.dsn))


async def attach_asyncpg(location: str) -> Driver:
    """The bare driver on a schema laid out by the engine, which its ``close`` leaves in place."""
    parsed = Location.decode(location)
    first = await asyncpg.connect(parsed.dsn)
    return AsyncpgDriver(location, parsed.dsn, parsed.schema, first, owns_location=False)
