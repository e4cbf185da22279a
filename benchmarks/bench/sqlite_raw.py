"""The SQLite engine's own SQL through the bare drivers: aiosqlite, and stdlib ``sqlite3``.

The baseline of each path runs exactly the statements the engine runs —
``SqliteDriver``'s SQL constants, with the same parameters and the same
PRAGMAs — and nothing else but the JSON encoding and decoding of payloads: no
validation, no ``Job`` snapshots, no handles. That is the most a store on
that driver could do.

aiosqlite: all workers share one connection (one thread), as the engine's
workers share one store; each call is one thread hop. Stdlib ``sqlite3`` runs
on the event loop's own thread and blocks it, so it is measured with one
worker only: it is the ceiling of the file itself, not an async store.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from typing import Any

import aiosqlite
from alkstore_sqlite.driver import SqliteDriver
from alkstore_sqlite.schema import BUSY_TIMEOUT_MS, CONNECTION_PRAGMAS

from alkstore_contract.suite.registry import load_adapter
from bench.engines import QUEUE
from bench.workload import Driver, DriverFactory, Payload

VISIBILITY_TIMEOUT_S = 300.0
"""The default ``QueueOpts`` stamps, as the engine would resolve them."""


def _now_us() -> int:
    return time.time_ns() // 1000


def _encode(item: Payload) -> str:
    return json.dumps(item, separators=(",", ":"))


def _stamps(now_us: int) -> dict[str, object]:
    return {
        "queue": QUEUE,
        "priority": 0,
        "max_attempts": 3,
        "run_at": now_us,
        "expires_at": None,
        "enqueued_at": now_us,
        "visibility_timeout_s": VISIBILITY_TIMEOUT_S,
        "visibility_timeout_us": int(VISIBILITY_TIMEOUT_S * 1_000_000),
        "backoff_base_s": 5.0,
        "dead_letter_retention_s": None,
        "dead_letter_retention_us": None,
    }


def _claim_params(worker: int, n: int) -> dict[str, object]:
    return {"queue": QUEUE, "now": _now_us(), "worker_id": f"w{worker}", "token": secrets.token_hex(16), "n": n}


async def _laid_out_location() -> str:
    """A fresh file with the engine's layout (opened once by the engine, then closed)."""
    adapter = load_adapter("sqlite")
    location = await adapter.create_location()
    store = await adapter.open_store(location)
    await store.close()
    return location


class AiosqliteDriver:
    """The engine's statements on one bare aiosqlite connection; ``close`` drops the file it owns."""

    def __init__(self, location: str, conn: aiosqlite.Connection, *, owns_location: bool = True) -> None:
        self._location = location
        self._conn = conn
        self._owns_location = owns_location

    async def enqueue(self, worker: int, item: Payload) -> None:
        await self._conn.execute(SqliteDriver.ENQUEUE_SQL, {**_stamps(_now_us()), "payload": _encode(item)})

    async def enqueue_many(self, worker: int, items: list[Payload]) -> None:
        texts = json.dumps([_encode(item) for item in items])
        await self._conn.execute_fetchall(SqliteDriver.ENQUEUE_MANY_SQL, {**_stamps(_now_us()), "payloads": texts})

    async def claim_one_ack(self, worker: int) -> int:
        params = _claim_params(worker, 1)
        rows = list(await self._conn.execute_fetchall(SqliteDriver.CLAIM_SQL, params))
        if not rows:
            return 0
        json.loads(rows[0][2])
        fence = {"id": rows[0][0], "token": params["token"], "now": _now_us()}
        cursor = await self._conn.execute(SqliteDriver.ACK_SQL, fence)
        if cursor.rowcount != 1:
            raise RuntimeError("raw ack failed")
        return 1

    async def claim_batch_ack(self, worker: int, n: int) -> int:
        rows = list(await self._conn.execute_fetchall(SqliteDriver.CLAIM_SQL, _claim_params(worker, n)))
        if not rows:
            return 0
        for row in rows:
            json.loads(row[2])
        ids = json.dumps(sorted(row[0] for row in rows))
        cursor = await self._conn.execute(SqliteDriver.ACK_BATCH_SQL, {"queue": QUEUE, "now": _now_us(), "ids": ids})
        return cursor.rowcount

    async def warm_up(self, workers: int) -> None:
        return None

    async def stored(self) -> int:
        rows = list(await self._conn.execute_fetchall("SELECT count(*) FROM jobs"))
        count: int = rows[0][0]
        return count

    async def close(self) -> None:
        await self._conn.close()
        if self._owns_location:
            await load_adapter("sqlite").drop_location(self._location)


class StdlibDriver:
    """The engine's statements on a stdlib ``sqlite3`` connection, called on the loop's own thread."""

    def __init__(self, location: str, conn: sqlite3.Connection) -> None:
        self._location = location
        self._conn = conn

    async def enqueue(self, worker: int, item: Payload) -> None:
        self._conn.execute(SqliteDriver.ENQUEUE_SQL, {**_stamps(_now_us()), "payload": _encode(item)})

    async def enqueue_many(self, worker: int, items: list[Payload]) -> None:
        texts = json.dumps([_encode(item) for item in items])
        self._conn.execute(SqliteDriver.ENQUEUE_MANY_SQL, {**_stamps(_now_us()), "payloads": texts}).fetchall()

    async def claim_one_ack(self, worker: int) -> int:
        params = _claim_params(worker, 1)
        rows: list[Any] = self._conn.execute(SqliteDriver.CLAIM_SQL, params).fetchall()
        if not rows:
            return 0
        json.loads(rows[0][2])
        fence = {"id": rows[0][0], "token": params["token"], "now": _now_us()}
        if self._conn.execute(SqliteDriver.ACK_SQL, fence).rowcount != 1:
            raise RuntimeError("raw ack failed")
        return 1

    async def claim_batch_ack(self, worker: int, n: int) -> int:
        rows: list[Any] = self._conn.execute(SqliteDriver.CLAIM_SQL, _claim_params(worker, n)).fetchall()
        if not rows:
            return 0
        for row in rows:
            json.loads(row[2])
        ids = json.dumps(sorted(row[0] for row in rows))
        return self._conn.execute(SqliteDriver.ACK_BATCH_SQL, {"queue": QUEUE, "now": _now_us(), "ids": ids}).rowcount

    async def warm_up(self, workers: int) -> None:
        return None

    async def stored(self) -> int:
        count: int = self._conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
        return count

    async def close(self) -> None:
        self._conn.close()
        await load_adapter("sqlite").drop_location(self._location)


async def _connect(location: str) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(location, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    for pragma in CONNECTION_PRAGMAS:
        await conn.execute(pragma)
    return conn


async def open_aiosqlite() -> Driver:
    location = await _laid_out_location()
    return AiosqliteDriver(location, await _connect(location))


async def new_aiosqlite_location() -> str:
    """A fresh file laid out by the engine, for several processes' bare drivers to share."""
    return await _laid_out_location()


async def attach_aiosqlite(location: str) -> Driver:
    """The bare driver on a file laid out by the engine, which its ``close`` leaves in place."""
    return AiosqliteDriver(location, await _connect(location), owns_location=False)


async def open_stdlib() -> Driver:
    location = await _laid_out_location()
    conn = sqlite3.connect(location, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    for pragma in CONNECTION_PRAGMAS:
        conn.execute(pragma)
    return StdlibDriver(location, conn)


AIOSQLITE: DriverFactory = open_aiosqlite
STDLIB: DriverFactory = open_stdlib
