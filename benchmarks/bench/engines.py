"""The alkstore engines as benchmark drivers: a fresh location, one store, the contract surface only.

Every worker shares the one store (and so, on SQLite, one connection; on
Postgres, one pool), as the workers of one process would. The store uses its
default clock: the system clock, or the database server's on Postgres.
"""

from __future__ import annotations

import asyncio

from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import Queue, Store
from bench.workload import Driver, DriverFactory, Payload

QUEUE = "bench"


class EngineDriver:
    """A store of one engine on a location; dropped on close when the driver owns it."""

    def __init__(self, engine: str, location: str, store: Store, *, owns_location: bool = True) -> None:
        self._engine = engine
        self._owns_location = owns_location
        self._location = location
        self._store = store
        self._queue: Queue = store.queue(QUEUE)

    async def enqueue(self, worker: int, item: Payload) -> None:
        await self._queue.enqueue(item)

    async def enqueue_many(self, worker: int, items: list[Payload]) -> None:
        await self._queue.enqueue_many(items)

    async def claim_one_ack(self, worker: int) -> int:
        handle = await self._queue.claim_one(f"w{worker}")
        if handle is None:
            return 0
        if not await handle.ack():
            raise RuntimeError(f"ack of job {handle.job.id!r} failed")
        return 1

    async def claim_batch_ack(self, worker: int, n: int) -> int:
        handles = await self._queue.claim_batch(f"w{worker}", n)
        if not handles:
            return 0
        acked = await self._queue.ack_batch([handle.job.id for handle in handles])
        if acked != len(handles):
            raise RuntimeError(f"ack_batch acked {acked} of {len(handles)} jobs")
        return acked

    async def warm_up(self, workers: int) -> None:
        """Concurrent reads, so a pooled store opens a connection per worker before the clock starts."""
        await asyncio.gather(*(self._queue.get_job(-1) for _ in range(workers)))

    async def stored(self) -> int:
        return await load_adapter(self._engine).count_stored_jobs(self._location)

    async def close(self) -> None:
        await self._store.close()
        if self._owns_location:
            await load_adapter(self._engine).drop_location(self._location)


def engine_factory(engine: str) -> DriverFactory:
    """Drivers of ``engine`` (``sqlite``, ``postgres``, ``mem``), each on a fresh location."""

    async def open_driver() -> Driver:
        adapter = load_adapter(engine)
        location = await adapter.create_location()
        store = await adapter.open_store(location)
        return EngineDriver(engine, location, store)

    return open_driver


async def attach_engine(engine: str, location: str) -> Driver:
    """A store of ``engine`` on an existing location, which ``close`` leaves in place."""
    store = await load_adapter(engine).open_store(location)
    return EngineDriver(engine, location, store, owns_location=False)
