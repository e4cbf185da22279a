"""The in-memory engine end to end: lifecycle, stamps, claims, leases, sweep, atomicity, sharing.

These pin the engine's own behaviour quickly (a ManualClock moves time, nothing
sleeps); the conformance suite certifies it against the contract separately.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta

import alkstore_mem
import pytest
import pytest_asyncio
from alkstore_mem import MemStore, adapter
from alkstore_mem.record import STATE
from alkstore_mem.space import COMPACTION_SLACK

from alkstore_contract import (
    Capability,
    EngineAdapter,
    HandleSpent,
    InvalidArgument,
    InvalidName,
    Job,
    JobId,
    JobState,
    ManualClock,
    PayloadError,
    Queue,
    QueueOpts,
)
from alkstore_contract.suite.expected import LAST_ERROR_EXPIRED, LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.suite.registry import load_adapter
from tests.closed_store import assert_every_op_refused, close_holding_a_claim
from tests.two_queues import three_of_four_claimed

pytestmark = pytest.mark.asyncio

START = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest_asyncio.fixture
async def location() -> AsyncIterator[str]:
    name = await adapter.create_location()
    yield name
    await adapter.drop_location(name)


@pytest_asyncio.fixture
async def store(location: str, clock: ManualClock) -> AsyncIterator[MemStore]:
    async with await alkstore_mem.open_store(location, clock=clock, seed=7) as opened:
        yield opened


async def stored(location: str) -> int:
    """The oracle: jobs in the space, counted without the store's code."""
    return await adapter.count_stored_jobs(location)


async def must_get(queue: Queue, job_id: JobId) -> Job:
    job = await queue.get_job(job_id)
    assert job is not None, f"job {job_id} should be stored"
    return job


# --- adapter -------------------------------------------------------------------------------------


async def test_adapter_declares_mem_with_clock_sharing_release_and_unique_keys_only() -> None:
    assert isinstance(adapter, EngineAdapter)
    assert load_adapter("mem") is adapter
    assert adapter.name == "mem"
    assert adapter.capabilities == {
        Capability.INJECTABLE_CLOCK,
        Capability.SHARED_LOCATION,
        Capability.RELEASE,
        Capability.UNIQUE_KEYS,
    }
    assert await adapter.unavailable_reason() is None
    first, second = await adapter.create_location(), await adapter.create_location()
    assert first != second
    store = await adapter.open_store(first)
    await store.queue("q").enqueue(1)
    assert (await stored(first), await stored(second)) == (1, 0)
    await store.close()
    await adapter.drop_location(first)
    await adapter.drop_location(second)
    assert await stored(first) == 0


# --- lifecycle and stamps ------------------------------------------------------------------------


async def test_lifecycle_enqueue_claim_ack(store: MemStore, location: str, clock: ManualClock) -> None:
    queue = store.queue("mail", QueueOpts(visibility_timeout_s=30))
    job_id = await queue.enqueue({"to": "a@example.org"})
    assert isinstance(job_id, int)
    job = await must_get(queue, job_id)
    assert (job.state, job.attempts, job.run_at, job.enqueued_at) == (JobState.READY, 0, START, START)
    assert (job.lease_expires_at, job.claimed_by, job.died_at, job.last_error) == (None, None, None, None)

    clock.advance(1)
    handle = await queue.claim_one("w1")
    assert handle is not None
    claimed = handle.job
    assert (claimed.id, claimed.state, claimed.attempts, claimed.claimed_by) == (job_id, JobState.PROCESSING, 1, "w1")
    assert claimed.lease_expires_at == START + timedelta(seconds=31)
    assert claimed.payload == {"to": "a@example.org"}
    assert await queue.claim_one("w2") is None

    assert await handle.ack() is True
    assert await queue.get_job(job_id) is None
    assert await stored(location) == 0
    with pytest.raises(HandleSpent):
        await handle.heartbeat()


async def test_enqueue_stamps_and_option_resolution(store: MemStore) -> None:
    opts = QueueOpts(visibility_timeout_s=12.5, max_attempts=4, backoff_base_s=0.25, dead_letter_retention_s=60)
    queue = store.queue("stamps", opts)
    plain = await must_get(queue, await queue.enqueue("plain"))
    assert (plain.visibility_timeout_s, plain.max_attempts, plain.backoff_base_s) == (12.5, 4, 0.25)
    assert (plain.dead_letter_retention_s, plain.priority, plain.expires_at) == (60.0, 0, None)

    later = START + timedelta(hours=2)
    both = await must_get(queue, await queue.enqueue("both", delay=1.5, run_at=later, expires=timedelta(minutes=1)))
    assert (both.run_at, both.expires_at) == (START + timedelta(seconds=1.5), START + timedelta(minutes=1))
    past = await must_get(queue, await queue.enqueue("past", run_at=START - timedelta(days=1), max_attempts=9))
    assert (past.run_at, past.max_attempts) == (START - timedelta(days=1), 9)

    restamped = store.queue("stamps", QueueOpts(max_attempts=1))
    assert await must_get(restamped, plain.id) == plain, "a later handle's opts never touch stamped jobs (E1)"


# --- claims --------------------------------------------------------------------------------------


async def test_claim_order_priority_then_ready_time_then_fifo(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("order")
    urgent_later = await queue.enqueue("urgent-later", priority=100, delay=10)
    low_old = await queue.enqueue("low-old", priority=-1, run_at=START - timedelta(hours=1))
    mid_a = await queue.enqueue("mid-a", priority=5)
    mid_older = await queue.enqueue("mid-older", priority=5, run_at=START - timedelta(seconds=1))
    mid_b = await queue.enqueue("mid-b", priority=5)
    expired = await queue.enqueue("expired", priority=50, expires=5)

    clock.advance(5)
    first = await queue.claim_batch("w", 3)
    assert [h.job.id for h in first] == [mid_older, mid_a, mid_b], "a future run_at waits whatever its priority"

    clock.advance(5)
    rest = await queue.claim_batch("w", 10)
    assert [h.job.id for h in rest] == [urgent_later, low_old], "an expired job is never handed out (X1)"
    assert (await must_get(queue, expired)).state is JobState.READY, "expiry waits for the sweep"


async def test_claim_batch_extents_and_worker_id(store: MemStore, location: str) -> None:
    queue = store.queue("extents")
    await queue.enqueue_many(list(range(3)))
    assert await queue.claim_batch("w", 0) == []
    assert await queue.claim_batch("w", -1) == []
    with pytest.raises(InvalidName):
        await queue.claim_one("")
    with pytest.raises(InvalidArgument):
        await queue.claim_batch("w", 2.0)  # type: ignore[arg-type]
    assert len(await queue.claim_batch("w", 10**9)) == 3
    assert await stored(location) == 3


async def test_fencing_after_reclaim(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("fence", QueueOpts(visibility_timeout_s=10))
    await queue.enqueue("x")
    old = await queue.claim_one("slow")
    assert old is not None
    clock.advance(10)
    assert await old.heartbeat() is False, "a heartbeat at the deadline is too late (H3)"
    new = await queue.claim_one("fast")
    assert new is not None
    assert (new.job.attempts, new.job.claimed_by) == (2, "fast")

    assert await old.heartbeat() is False
    assert await old.retry("late") is False
    job = await must_get(queue, new.job.id)
    assert (job.state, job.claimed_by, job.last_error) == (JobState.PROCESSING, "fast", None)
    with pytest.raises(HandleSpent):
        await old.ack()
    assert await new.ack() is True


async def test_reclaim_consumes_an_attempt_then_sweep_dead_letters(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("attempts", QueueOpts(visibility_timeout_s=5, max_attempts=2))
    job_id = await queue.enqueue("x")
    assert (await queue.claim_one("a")) is not None
    clock.advance(5)
    second = await queue.claim_one("b")
    assert second is not None
    assert second.job.attempts == 2
    clock.advance(5)
    assert await queue.claim_one("c") is None, "a lapsed lease with no attempt left is never handed out (C7)"
    assert await queue.sweep_expired() == 1
    job = await must_get(queue, job_id)
    assert (job.state, job.last_error, job.died_at, job.attempts) == (
        JobState.DEAD,
        LAST_ERROR_MAX_ATTEMPTS,
        clock.now(),
        2,
    )
    assert (job.lease_expires_at, job.claimed_by) == (None, None)
    assert await second.ack() is False


async def test_time_going_back_keeps_claims_exact(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("skew")
    delayed = await queue.enqueue("delayed", delay=5)
    await queue.enqueue("first", delay=5, priority=1)
    clock.advance(6)
    first = await queue.claim_one("w")
    assert first is not None
    assert first.job.payload == "first", "this claim also lined up the other due job"
    late = await queue.enqueue("late")
    clock.set(START + timedelta(seconds=1))
    assert await queue.claim_one("w") is None, "back in time, neither job is due yet"
    clock.set(START + timedelta(seconds=6))
    assert [h.job.id for h in await queue.claim_batch("w", 5)] == [delayed, late]


async def test_heaps_rebuilt_under_churn_keep_every_job(store: MemStore, clock: ManualClock, location: str) -> None:
    queue = store.queue("churn", QueueOpts(visibility_timeout_s=60))
    delayed = await queue.enqueue("delayed", delay=30)
    await queue.enqueue("held")
    held = await queue.claim_one("holder")
    assert held is not None
    for _ in range(5):
        await queue.enqueue_many(list(range(1000)))
        while batch := await queue.claim_batch("w", 100):
            assert await queue.ack_batch([h.job.id for h in batch]) == len(batch)
    assert await stored(location) == 2
    clock.advance(60)
    handles = await queue.claim_batch("w", 5)
    assert sorted(h.job.id for h in handles) == sorted([delayed, held.job.id])


# --- handle ops ----------------------------------------------------------------------------------


async def test_retry_backoff_explicit_delay_and_dead_letter(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("retry", QueueOpts(max_attempts=3, backoff_base_s=8))
    job_id = await queue.enqueue("x")
    first = await queue.claim_one("w")
    assert first is not None
    assert await first.retry("boom") is True
    job = await must_get(queue, job_id)
    assert (job.state, job.last_error, job.lease_expires_at, job.claimed_by) == (JobState.READY, "boom", None, None)
    assert START + timedelta(seconds=4) <= job.run_at <= START + timedelta(seconds=8), "cap 8 s, equal jitter (R2)"

    clock.set(job.run_at)
    second = await queue.claim_one("w")
    assert second is not None
    assert await second.retry(delay=0) is True
    kept = await must_get(queue, job_id)
    assert (kept.run_at, kept.last_error) == (clock.now(), "boom"), "no new error keeps the old one"

    third = await queue.claim_one("w")
    assert third is not None
    assert third.job.attempts == 3
    assert await third.retry() is True
    dead = await must_get(queue, job_id)
    assert (dead.state, dead.last_error, dead.died_at) == (JobState.DEAD, LAST_ERROR_MAX_ATTEMPTS, clock.now())
    assert await queue.claim_one("w") is None


async def test_fail_and_heartbeat(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("hb", QueueOpts(visibility_timeout_s=10))
    job_id = await queue.enqueue("x")
    handle = await queue.claim_one("w")
    assert handle is not None
    clock.advance(8)
    assert await handle.heartbeat() is True
    assert (await must_get(queue, job_id)).lease_expires_at == clock.now() + timedelta(seconds=10)
    assert await handle.heartbeat(extend=2) is True
    assert (await must_get(queue, job_id)).lease_expires_at == clock.now() + timedelta(seconds=2), "reset, not added"
    with pytest.raises(InvalidArgument):
        await handle.heartbeat(extend=0)
    with pytest.raises(InvalidArgument):
        await handle.fail(error=b"bytes")  # type: ignore[arg-type]
    assert await handle.fail() is True, "a refused argument does not spend the handle"
    job = await must_get(queue, job_id)
    assert (job.state, job.last_error, job.died_at) == (JobState.DEAD, LAST_ERROR_FAILED, clock.now())
    with pytest.raises(HandleSpent):
        await handle.fail()


async def test_ack_batch_cancel_and_isolation(store: MemStore, clock: ManualClock) -> None:
    queue, other, ids, foreign, handles = await three_of_four_claimed(store)
    lapsed = handles[2].job.id
    clock.advance(5)
    assert await handles[2].heartbeat(extend=1) is True
    clock.advance(1)
    assert await queue.ack_batch([ids[0], ids[0], ids[1], lapsed, ids[3], foreign, 999, "1"]) == 2
    assert await other.get_job(lapsed) is None
    assert await other.cancel(lapsed) is False
    assert await queue.cancel(lapsed) is True
    assert await queue.cancel(lapsed) is False
    assert await queue.get_job(str(ids[3])) is None, "a str id is of the wrong kind here: not found"
    assert await queue.ack_batch([]) == 0
    assert await other.get_job(foreign) is not None


# --- sweep and retention -------------------------------------------------------------------------


async def test_sweep_expiry_and_retention(store: MemStore, clock: ManualClock, location: str) -> None:
    queue = store.queue("sweep", QueueOpts(visibility_timeout_s=100, dead_letter_retention_s=30))
    keep = store.queue("keep")
    held_expiring = await queue.enqueue("p", expires=10)
    ready_expiring = await queue.enqueue("r", expires=10)
    survivor = await queue.enqueue("s")
    assert [h.job.id for h in await queue.claim_batch("w", 1)] == [held_expiring]
    await keep.enqueue("k")
    doomed = await keep.claim_one("w")
    assert doomed is not None
    assert await doomed.fail("bad") is True

    clock.advance(10)
    assert await queue.sweep_expired() == 2
    for job_id in (ready_expiring, held_expiring):
        job = await must_get(queue, job_id)
        assert (job.state, job.last_error, job.died_at) == (JobState.DEAD, LAST_ERROR_EXPIRED, clock.now())
        assert (job.lease_expires_at, job.claimed_by) == (None, None)
    assert await queue.sweep_expired() == 0

    clock.advance(29)
    assert await queue.sweep_expired() == 0
    assert await stored(location) == 4
    clock.advance(1)
    assert await queue.sweep_expired() == 0
    assert (await queue.get_job(ready_expiring), await queue.get_job(held_expiring)) == (None, None)
    assert await queue.get_job(survivor) is not None
    clock.advance(timedelta(days=365))
    assert await keep.sweep_expired() == 0
    assert (await must_get(keep, doomed.job.id)).last_error == "bad", "retention None keeps dead jobs forever"


async def test_dead_job_moved_by_a_sweep_waits_for_the_next_one(store: MemStore, clock: ManualClock) -> None:
    queue = store.queue("zero", QueueOpts(dead_letter_retention_s=0))
    job_id = await queue.enqueue("x", expires=1)
    clock.advance(1)
    assert await queue.sweep_expired() == 1
    assert await queue.get_job(job_id) is not None
    assert await queue.sweep_expired() == 0
    assert await queue.get_job(job_id) is None


# --- atomicity and validation --------------------------------------------------------------------


async def test_enqueue_many_is_all_or_nothing(store: MemStore, location: str) -> None:
    queue = store.queue("many")
    with pytest.raises(PayloadError):
        await queue.enqueue_many([{"ok": 1}, {"bad": {1, 2}}, "ok"])
    with pytest.raises(InvalidArgument):
        await queue.enqueue_many([1, 2], delay=-1)
    with pytest.raises(InvalidArgument, match="payloads"):
        await queue.enqueue_many(x for x in [1])  # type: ignore[arg-type]
    assert await stored(location) == 0
    assert await queue.enqueue_many([]) == []
    ids = await queue.enqueue_many(("a", "b", "c"), priority=3, expires=60)
    jobs = [await must_get(queue, job_id) for job_id in ids]
    assert [job.payload for job in jobs] == ["a", "b", "c"]
    assert {(job.enqueued_at, job.expires_at, job.priority) for job in jobs} == {
        (START, START + timedelta(seconds=60), 3)
    }
    assert [h.job.id for h in await queue.claim_batch("w", 3)] == ids


@pytest.mark.parametrize(
    ("payload", "options", "error"),
    [
        ({1, 2}, {}, PayloadError),
        (float("nan"), {}, PayloadError),
        (b"bytes", {}, PayloadError),
        ("x", {"delay": -1}, InvalidArgument),
        ("x", {"expires": float("inf")}, InvalidArgument),
        ("x", {"run_at": datetime(2030, 1, 1)}, InvalidArgument),  # naive on purpose
        ("x", {"priority": True}, InvalidArgument),
        ("x", {"max_attempts": 0}, InvalidArgument),
    ],
)
async def test_bad_input_stores_nothing(
    store: MemStore, location: str, payload: object, options: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        await store.queue("v").enqueue(payload, **options)  # type: ignore[arg-type]
    assert await stored(location) == 0


async def test_queue_names_and_opts_are_validated(store: MemStore) -> None:
    for name in ["", "x" * 201, "a\nb", "__reserved"]:
        with pytest.raises(InvalidName):
            store.queue(name)
    with pytest.raises(InvalidArgument, match="opts"):
        store.queue("q", {"max_attempts": 2})  # type: ignore[arg-type]
    assert store.queue("q").opts == QueueOpts()


async def test_closed_store_fails_closed_and_writes_nothing(location: str, clock: ManualClock) -> None:
    store = await alkstore_mem.open_store(location, clock=clock)
    queue, handle, job_id = await close_holding_a_claim(store)
    await assert_every_op_refused(queue, handle, job_id)
    async with await alkstore_mem.open_store(location, clock=clock) as other:
        job = await must_get(other.queue("q"), job_id)
        assert (job.state, job.claimed_by) == (JobState.PROCESSING, "w"), "closing a store closes only that store"
        assert await stored(location) == 1


# --- snapshots, sharing, concurrency -------------------------------------------------------------


async def test_snapshots_never_alias_the_stored_payload(store: MemStore) -> None:
    queue = store.queue("immutable")
    job_id = await queue.enqueue({"items": [1, 2], "meta": {"k": "v"}})
    read = (await must_get(queue, job_id)).payload
    assert isinstance(read, dict)
    read["items"].append(3)
    handle = await queue.claim_one("w")
    assert handle is not None
    claimed = handle.job.payload
    assert isinstance(claimed, dict)
    assert claimed == {"items": [1, 2], "meta": {"k": "v"}}
    claimed["meta"]["k"] = "changed"
    assert (await must_get(queue, job_id)).payload == {"items": [1, 2], "meta": {"k": "v"}}


async def test_two_stores_on_one_space_share_one_state(location: str, clock: ManualClock) -> None:
    async with (
        await alkstore_mem.open_store(location, clock=clock) as left,
        await alkstore_mem.open_store(location, clock=clock) as right,
    ):
        first = await left.queue("shared").enqueue("from-left")
        second = await right.queue("shared").enqueue("from-right")
        assert first != second
        handle = await right.queue("shared").claim_one("r")
        assert handle is not None
        assert handle.job.id == first
        assert await left.queue("shared").claim_one("l") is not None
        assert await left.queue("shared").claim_one("l") is None
        assert await handle.ack() is True
        assert await left.queue("shared").get_job(first) is None
        assert await stored(location) == 1


async def test_concurrent_workers_drain_each_job_exactly_once(location: str, clock: ManualClock) -> None:
    stores = [await alkstore_mem.open_store(location, clock=clock) for _ in range(2)]
    ids = await stores[0].queue("drain").enqueue_many(list(range(1000)))
    handed_out: list[JobId] = []

    async def worker(number: int) -> None:
        queue = stores[number % 2].queue("drain")
        while batch := await queue.claim_batch(f"w{number}", 1 + number % 3):
            for handle in batch:
                handed_out.append(handle.job.id)
                await asyncio.sleep(0)
                assert await handle.ack() is True

    await asyncio.gather(*(worker(n) for n in range(50)))
    assert len(handed_out) == len(ids)
    assert set(handed_out) == set(ids)
    assert await stored(location) == 0
    for opened in stores:
        await opened.close()


async def test_stored_jobs_cost_the_garbage_collector_nothing(store: MemStore, clock: ManualClock) -> None:
    """Every state a job can be stored in is a tuple the collector untracks (``alkstore_mem.record``'s why).

    A tracked record per job made each full collection walk a million of them
    (0.5 s) and brought the next one on sooner (issue 16).
    """
    queue = store.queue("q", QueueOpts(max_attempts=3, dead_letter_retention_s=60.0))
    await queue.enqueue_many([{"n": n} for n in range(4)], expires=timedelta(hours=1))
    claimed = await queue.claim_batch("w", 3)
    await claimed[0].heartbeat()
    await claimed[1].fail("boom")
    await claimed[2].retry(delay=timedelta(seconds=5))
    records = list(store.driver.space.index("q").jobs.values())
    gc.collect()
    states = sorted(record[STATE] for record in records)
    assert states == ["dead", "processing", "ready", "ready"]
    assert not [record for record in records if gc.is_tracked(record)]


async def test_ended_leases_leave_the_lease_heap_and_the_live_ones_stay(store: MemStore, clock: ManualClock) -> None:
    """Acks, retries and fails end leases early: their entries are dropped, never looked up once lapsed.

    A stale entry used to wait in the lease heap until its deadline, then cost
    a lookup of a job long gone (``alkstore_mem.space``); the jobs still in flight
    must stay in the heap through every compaction, and be reclaimed once lapsed.
    """
    queue = store.queue("q")
    await queue.enqueue_many([{"n": n} for n in range(3_000)])
    handles = await queue.claim_batch("w", 3_000)
    in_flight = handles[::100]
    for number, handle in enumerate(handles):
        if handle not in in_flight:
            await (handle.ack() if number % 3 else handle.fail("boom"))
    index = store.driver.space.index("q")
    assert len(index.leases) <= len(in_flight) + 2 * COMPACTION_SLACK
    clock.advance(timedelta(hours=1))
    reclaimed = await queue.claim_batch("w2", 100)
    assert sorted(handle.job.id for handle in reclaimed) == sorted(handle.job.id for handle in in_flight)


@pytest.mark.asyncio
async def test_an_unknown_enqueue_option_is_refused_naming_the_op_and_the_keyword(store: MemStore) -> None:
    """E1–E11: the enqueue ops take their options as one typed set (``EnqueueKeywords``); a misspelt keyword is a
    TypeError naming the op called and the keyword, and stores nothing. If this fails, check
    ``alkstore_contract/handles.py`` (``_packed``)."""
    queue = store.queue("typos")
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "enqueue": lambda: queue.enqueue({}, dealy=1),  # type: ignore[call-arg]
        "enqueue_many": lambda: queue.enqueue_many([{}], dealy=1),  # type: ignore[call-arg]
        "enqueue_unique": lambda: queue.enqueue_unique({}, "k", dealy=1),  # type: ignore[call-arg]
    }
    for op, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{op}\(\) got an unexpected keyword argument 'dealy'; its options"):
            await call()
    assert await queue.claim_one("w") is None
