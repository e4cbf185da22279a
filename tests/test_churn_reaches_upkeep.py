"""``sweep_and_retention``'s churn leg reaches the upkeep of the in-process engines, or its leg judges nothing of it.

The leg keeps a dead job with retention ``None`` through ``CHURN_JOBS`` jobs on
the batched paths, so that whatever an engine does on its own every so many jobs
has run by the time the job is read back. The suite knows no engine's
internals; these tests do, and fail once an engine's upkeep moves past what the
churn puts through (the length was chosen from these thresholds): the Postgres
vacuum's bookkeeping in ``tests/test_postgres_upkeep.py``, here the in-memory
engine's heap compaction and rebuild and the reference SQLite engine's WAL
checkpoints (the Node.js and Rust engines run the same layout with SQLite's
default checkpoint too).
"""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
import pytest_asyncio
from alkstore_mem import MemDriver, MemStore, adapter
from alkstore_mem.space import QueueIndex, space_named
from alkstore_sqlite import open_store as open_sqlite

from alkstore_contract import ManualClock
from alkstore_contract.suite.rows.sweep_and_retention import CHURN_JOBS, CHURN_OPTS, churn_through

pytestmark = pytest.mark.asyncio


class RebuildCountingDriver(MemDriver):
    """The mem engine's driver, counting the rebuilds of a queue's heaps from its jobs."""

    rebuilds = 0

    def _rebuild(self, index: QueueIndex, now: datetime) -> None:
        RebuildCountingDriver.rebuilds += 1
        super()._rebuild(index, now)


@pytest_asyncio.fixture
async def mem_location() -> AsyncIterator[str]:
    name = await adapter.create_location()
    yield name
    await adapter.drop_location(name)


async def test_the_churn_brings_the_mem_engines_heap_rebuild(mem_location: str) -> None:
    """Each claim of a last attempt files a watch entry an ack leaves stale: enough of them rebuild the heaps."""
    RebuildCountingDriver.rebuilds = 0
    store = MemStore(RebuildCountingDriver(space_named(mem_location)), clock=ManualClock(), seed=1)
    try:
        await churn_through(store.queue("churn", CHURN_OPTS), CHURN_JOBS)
    finally:
        await store.close()
    assert RebuildCountingDriver.rebuilds >= 1


def wal_checkpoint_sequence(database: Path) -> int:
    """The WAL header's checkpoint sequence number: SQLite adds one each time a checkpoint lets the WAL restart."""
    header = (database.parent / f"{database.name}-wal").read_bytes()[:16]
    magic, _, _, sequence = struct.unpack(">IIII", header)
    assert magic in (0x377F0682, 0x377F0683), f"not a WAL header: {header!r}"
    return int(sequence)


async def test_the_churn_brings_sqlites_wal_checkpoints(tmp_path: Path) -> None:
    """The churn writes many times SQLite's default of 1,000 pages between automatic checkpoints."""
    database = tmp_path / "churn.db"
    store = await open_sqlite(database, clock=ManualClock(), seed=1)
    try:
        queue = store.queue("churn", CHURN_OPTS)
        await churn_through(queue, 500)
        before = wal_checkpoint_sequence(database)
        await churn_through(queue, CHURN_JOBS - 500)
        after = wal_checkpoint_sequence(database)
    finally:
        await store.close()
    assert after - before >= 2
