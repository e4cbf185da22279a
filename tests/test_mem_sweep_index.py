"""The mem engine's sweep looks only at the jobs its ``watched`` heap says are due, and still misses none.

A sweep used to test every job of the queue, so moving 1,000 expired jobs out
of a million cost a hundred times what it cost among ten thousand (issue 16).
These tests count the jobs a sweep looks at (through the driver's own override
point) and check that every way a job becomes the sweep's business — expiry,
a lapsed last attempt (also after a heartbeat), retention after a fail, a retry
or a sweep, and a clock set back — is still found.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio
from alkstore_mem import MemDriver, MemStore, adapter
from alkstore_mem.record import JobRecord
from alkstore_mem.space import space_named

from alkstore_contract import JobState, ManualClock, QueueOpts
from alkstore_contract.resolution import LAST_ERROR_EXPIRED, LAST_ERROR_MAX_ATTEMPTS

pytestmark = pytest.mark.asyncio

START = datetime(2030, 1, 1, tzinfo=UTC)


class CountingDriver(MemDriver):
    """A driver that counts the jobs its sweeps look at (every look starts with the retention check)."""

    looked = 0

    def _retention_over(self, record: JobRecord, now: datetime) -> bool:
        CountingDriver.looked += 1
        return super()._retention_over(record, now)


@pytest_asyncio.fixture
async def location() -> AsyncIterator[str]:
    name = await adapter.create_location()
    yield name
    await adapter.drop_location(name)


async def open_counting(location: str, clock: ManualClock) -> MemStore:
    store = MemStore(CountingDriver(space_named(location)), clock=clock, seed=1)
    CountingDriver.looked = 0
    return store


async def test_a_sweep_looks_only_at_the_jobs_that_are_due(location: str) -> None:
    clock = ManualClock(START)
    store = await open_counting(location, clock)
    queue = store.queue("q")
    await queue.enqueue_many([{"n": n} for n in range(5_000)])
    await queue.enqueue_many([{"n": n} for n in range(5_000)], expires=timedelta(hours=1))
    expiring = await queue.enqueue_many([{"n": n} for n in range(10)], expires=timedelta(seconds=5))
    clock.advance(timedelta(seconds=6))
    assert await queue.sweep_expired() == 10
    assert CountingDriver.looked == 10
    for job_id in expiring:
        job = await queue.get_job(job_id)
        assert job is not None
        assert (job.state, job.last_error) == (JobState.DEAD, LAST_ERROR_EXPIRED)


async def test_a_lapsed_last_attempt_is_found_after_a_heartbeat(location: str) -> None:
    clock = ManualClock(START)
    store = await open_counting(location, clock)
    queue = store.queue("q", QueueOpts(max_attempts=1, visibility_timeout_s=10))
    job_id = await queue.enqueue({"n": 1})
    handle = await queue.claim_one("w")
    assert handle is not None
    clock.advance(timedelta(seconds=8))
    assert await handle.heartbeat(timedelta(seconds=20))
    clock.advance(timedelta(seconds=5))
    assert await queue.sweep_expired() == 0, "the first lease is over but the heartbeat's is not"
    clock.advance(timedelta(seconds=16))
    assert await queue.sweep_expired() == 1
    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.state, job.last_error) == (JobState.DEAD, LAST_ERROR_MAX_ATTEMPTS)


@pytest.mark.parametrize("death", ["fail", "retry", "sweep"])
async def test_retention_purges_jobs_dead_by_every_path(location: str, death: str) -> None:
    clock = ManualClock(START)
    store = await open_counting(location, clock)
    opts = QueueOpts(max_attempts=1, dead_letter_retention_s=60)
    queue = store.queue("q", opts)
    job_id = await queue.enqueue({"n": 1}, expires=timedelta(seconds=5) if death == "sweep" else None)
    if death == "sweep":
        clock.advance(timedelta(seconds=5))
        assert await queue.sweep_expired() == 1
    else:
        handle = await queue.claim_one("w")
        assert handle is not None
        assert await (handle.fail() if death == "fail" else handle.retry())
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.state is JobState.DEAD
    clock.advance(timedelta(seconds=59))
    await queue.sweep_expired()
    assert await queue.get_job(job_id) is not None, "kept until its retention is over"
    clock.advance(timedelta(seconds=1))
    await queue.sweep_expired()
    assert await queue.get_job(job_id) is None


async def test_a_clock_set_back_rebuilds_what_the_sweep_watches(location: str) -> None:
    clock = ManualClock(START)
    store = await open_counting(location, clock)
    queue = store.queue("q")
    job_id = await queue.enqueue({"n": 1}, expires=timedelta(seconds=30))
    clock.advance(timedelta(seconds=10))
    assert await queue.sweep_expired() == 0
    clock.set(START)
    assert await queue.sweep_expired() == 0
    clock.set(START + timedelta(seconds=30))
    assert await queue.sweep_expired() == 1
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.state is JobState.DEAD
