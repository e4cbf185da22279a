"""The SQLite reference engine end to end: its own behaviour, its file, its concurrency.

The conformance rows pin the contract for every engine; these tests pin what is
particular to this one — the file it writes (read back with stdlib sqlite3,
never through the engine), several stores and processes on one file, reopen,
and the statement gate that keeps one connection's transactions whole.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from alkstore_sqlite import SchemaVersionError, SqliteStore, adapter, open_store
from alkstore_sqlite.driver import SqliteDriver
from alkstore_sqlite.gate import StatementGate
from alkstore_sqlite.schema import LAYOUT, SCHEMA_VERSION

from alkstore_contract import (
    Capability,
    HandleSpent,
    InvalidArgument,
    InvalidName,
    JobState,
    ManualClock,
    PayloadError,
    QueueOpts,
    StoreClosed,
)
from alkstore_contract.suite.expected import LAST_ERROR_EXPIRED, LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS, r2_range_s
from tests.closed_store import assert_every_op_refused, close_holding_a_claim
from tests.test_sqlite_layout import write_layout_1
from tests.two_queues import three_of_four_claimed

START = datetime(2030, 1, 1, tzinfo=UTC)


def stored_rows(path: Path, where: str = "1") -> int:
    """How many jobs the file holds, read with stdlib sqlite3 (not the engine)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=30)
    try:
        count: int = conn.execute(f"SELECT count(*) FROM jobs WHERE {where}").fetchone()[0]
        return count
    finally:
        conn.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "jobs.sqlite3"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest_asyncio.fixture
async def store(db_path: Path, clock: ManualClock) -> AsyncIterator[SqliteStore]:
    opened = await open_store(db_path, clock=clock, seed=7)
    try:
        yield opened
    finally:
        await opened.close()


# --- lifecycle, stamps, order ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_lifecycle_enqueue_claim_ack(store: SqliteStore, db_path: Path, clock: ManualClock) -> None:
    queue = store.queue("emails")
    job_id = await queue.enqueue({"to": "ann@example.com", "n": [1, 2.5, None]})
    assert isinstance(job_id, int)
    assert stored_rows(db_path) == 1

    ready = await queue.get_job(job_id)
    assert ready is not None
    assert ready.state is JobState.READY
    assert ready.payload == {"to": "ann@example.com", "n": [1, 2.5, None]}
    assert ready.attempts == 0
    assert ready.lease_expires_at is None
    assert ready.claimed_by is None

    handle = await queue.claim_one("worker-1")
    assert handle is not None
    assert handle.job.id == job_id
    assert handle.job.state is JobState.PROCESSING
    assert handle.job.attempts == 1
    assert handle.job.claimed_by == "worker-1"
    assert handle.job.lease_expires_at == START + timedelta(seconds=300)
    assert await queue.claim_one("worker-2") is None

    assert await handle.ack() is True
    assert await queue.get_job(job_id) is None
    assert stored_rows(db_path) == 0
    with pytest.raises(HandleSpent):
        await handle.heartbeat()


@pytest.mark.asyncio
async def test_stamps_and_option_resolution(store: SqliteStore, clock: ManualClock) -> None:
    opts = QueueOpts(
        visibility_timeout_s=timedelta(milliseconds=1500),
        max_attempts=5,
        backoff_base_s=2,
        dead_letter_retention_s=60,
    )
    queue = store.queue("stamped", opts)
    clock.advance(timedelta(microseconds=123_457))
    now = clock.now()

    delayed = await queue.enqueue("d", delay=0.25, run_at=START - timedelta(days=1), priority=-3)
    past = await queue.enqueue("p", run_at=START - timedelta(days=1), expires=timedelta(seconds=90), max_attempts=9)

    job = await queue.get_job(delayed)
    assert job is not None
    assert job.run_at == now + timedelta(seconds=0.25)  # delay wins over run_at (E2)
    assert job.enqueued_at == now
    assert job.expires_at is None
    assert job.priority == -3
    assert (job.visibility_timeout_s, job.max_attempts, job.backoff_base_s) == (1.5, 5, 2.0)
    assert job.dead_letter_retention_s == 60.0

    job = await queue.get_job(past)
    assert job is not None
    assert job.run_at == START - timedelta(days=1)  # stored verbatim (E3)
    assert job.expires_at == now + timedelta(seconds=90)
    assert job.max_attempts == 9

    handle = await queue.claim_one("w")  # the past run_at is claimable at once; priority 0 beats -3
    assert handle is not None
    assert handle.job.id == past
    assert handle.job.lease_expires_at == now + timedelta(seconds=1.5)
    assert type(handle.job.visibility_timeout_s) is float  # RETURNING rows decode like SELECT rows


@pytest.mark.asyncio
async def test_claim_order_eligibility_and_extents(store: SqliteStore, db_path: Path, clock: ManualClock) -> None:
    queue = store.queue("ordered")
    low_old = await queue.enqueue("low-old", run_at=START - timedelta(seconds=10))
    high_late = await queue.enqueue("high-late", priority=5, run_at=START - timedelta(seconds=1))
    high_early = await queue.enqueue("high-early", priority=5, run_at=START - timedelta(seconds=2))
    tie_a = await queue.enqueue("tie-a")
    tie_b = await queue.enqueue("tie-b")
    await queue.enqueue("future", delay=30)
    await queue.enqueue("expiring", expires=0)  # expires_at == now: never handed out (X1)

    assert await queue.claim_batch("w", 0) == []
    assert await queue.claim_batch("w", -1) == []
    assert stored_rows(db_path, "state = 'processing'") == 0
    with pytest.raises(InvalidName):
        await queue.claim_batch("", 1)
    with pytest.raises(InvalidArgument):
        await queue.claim_batch("w", 1.5)  # type: ignore[arg-type]

    handles = await queue.claim_batch("w", 100)
    assert [h.job.id for h in handles] == [high_early, high_late, low_old, tie_a, tie_b]
    assert len({h.job.lease_expires_at for h in handles}) == 1

    clock.advance(29)
    assert await queue.claim_one("w") is None  # the rest are leased, not yet ready, or expired
    clock.advance(271)  # every lease of the batch has now lapsed: reclaims come back in C2 order
    again = await queue.claim_batch("w", 3)
    assert [h.job.id for h in again] == [high_early, high_late, low_old]
    assert all(h.job.attempts == 2 for h in again)


# --- handle fencing, retry, dead letters ------------------------------------------------------


@pytest.mark.asyncio
async def test_fencing_after_lapse_and_reclaim(store: SqliteStore, clock: ManualClock) -> None:
    queue = store.queue("fenced", QueueOpts(visibility_timeout_s=10))
    job_id = await queue.enqueue({"k": 1})
    first = await queue.claim_one("w1")
    assert first is not None

    clock.advance(9)
    assert await first.heartbeat(extend=2) is True  # absolute reset: now + 2, not deadline + 2
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.lease_expires_at == START + timedelta(seconds=11)

    clock.advance(2)  # exactly at the deadline: the lease is over
    assert await first.heartbeat() is False
    second = await queue.claim_one("w2")
    assert second is not None
    assert second.job.attempts == 2
    assert second.job.claimed_by == "w2"

    assert await first.heartbeat() is False
    assert await first.retry("late") is False
    with pytest.raises(HandleSpent):
        await first.ack()
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.claimed_by == "w2"
    assert job.last_error is None

    assert await second.heartbeat() is True
    assert await second.ack() is True
    assert await queue.get_job(job_id) is None


@pytest.mark.asyncio
async def test_retry_backoff_and_dead_letters(store: SqliteStore, clock: ManualClock) -> None:
    queue = store.queue("retries", QueueOpts(max_attempts=2, backoff_base_s=4))
    job_id = await queue.enqueue("x")

    handle = await queue.claim_one("w")
    assert handle is not None
    with pytest.raises(InvalidArgument):
        await handle.retry(delay=-1)
    assert await handle.retry("first error") is True  # the bad delay did not spend the handle
    job = await queue.get_job(job_id)
    assert job is not None
    low, high = r2_range_s(4, 1)
    assert START + timedelta(seconds=low) <= job.run_at <= START + timedelta(seconds=high)
    assert (job.state, job.last_error, job.lease_expires_at, job.claimed_by) == (
        JobState.READY,
        "first error",
        None,
        None,
    )

    clock.set(job.run_at)
    handle = await queue.claim_one("w")
    assert handle is not None
    assert handle.job.attempts == 2
    assert await handle.retry() is True  # attempts spent: dead, not ready (R4)
    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.state, job.last_error, job.died_at) == (JobState.DEAD, LAST_ERROR_MAX_ATTEMPTS, clock.now())
    assert await queue.claim_one("w") is None

    kept = await queue.enqueue("kept-error")
    handle = await queue.claim_one("w")
    assert handle is not None
    assert await handle.retry("boom", delay=0) is True
    handle = await queue.claim_one("w")
    assert handle is not None
    job = await queue.get_job(kept)
    assert job is not None
    assert job.last_error == "boom"
    assert await handle.fail() is True
    job = await queue.get_job(kept)
    assert job is not None
    assert (job.state, job.last_error, job.attempts) == (JobState.DEAD, LAST_ERROR_FAILED, 2)
    assert await handle_on_dead_job_is_inert(store)


async def handle_on_dead_job_is_inert(store: SqliteStore) -> bool:
    """A handle whose job was cancelled under it returns False from every op (D3)."""
    queue = store.queue("inert")
    job_id = await queue.enqueue(None)
    handle = await queue.claim_one("w")
    assert handle is not None
    assert await queue.cancel(job_id) is True
    assert await handle.heartbeat() is False
    return await handle.fail("too late") is False


# --- sweep and retention ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_sweep_moves_expired_and_exhausted_once(store: SqliteStore, clock: ManualClock) -> None:
    queue = store.queue("swept", QueueOpts(visibility_timeout_s=5, max_attempts=1))
    other = store.queue("other")
    ready_expiring = await queue.enqueue("r", expires=20, delay=100)
    processing_expiring = await queue.enqueue("p", expires=20)
    exhausted = await queue.enqueue("e")
    untouched = await other.enqueue("o", expires=1)
    claimed = {h.job.id for h in await queue.claim_batch("w", 2)}
    assert claimed == {processing_expiring, exhausted}

    clock.advance(5)  # "exhausted" lapsed with attempts == max_attempts: never handed out again (C7)
    assert await queue.claim_one("w") is None
    clock.advance(15)
    assert await queue.sweep_expired() == 3
    assert await queue.sweep_expired() == 0

    for job_id, error in ((ready_expiring, LAST_ERROR_EXPIRED), (processing_expiring, LAST_ERROR_EXPIRED)):
        job = await queue.get_job(job_id)
        assert job is not None
        assert (job.state, job.last_error, job.died_at) == (JobState.DEAD, error, clock.now())
        assert job.lease_expires_at is None
        assert job.claimed_by is None
    job = await queue.get_job(exhausted)
    assert job is not None
    assert (job.state, job.last_error) == (JobState.DEAD, LAST_ERROR_MAX_ATTEMPTS)
    other_job = await other.get_job(untouched)
    assert other_job is not None
    assert other_job.state is JobState.READY


@pytest.mark.asyncio
async def test_retention_purges_only_after_it_runs_out(store: SqliteStore, db_path: Path, clock: ManualClock) -> None:
    queue = store.queue("retained", QueueOpts(dead_letter_retention_s=10))
    forever = store.queue("forever")
    failed = await queue.enqueue("f")
    kept_forever = await forever.enqueue("k")
    for q in (queue, forever):
        handle = await q.claim_one("w")
        assert handle is not None
        assert await handle.fail() is True
    expiring = await queue.enqueue("x", expires=10)

    clock.advance(timedelta(seconds=10) - timedelta(microseconds=1))
    assert await queue.sweep_expired() == 0
    assert await queue.get_job(failed) is not None

    clock.advance(timedelta(microseconds=1))
    assert await queue.sweep_expired() == 1  # "expiring" dies now; "failed" is purged
    assert await queue.get_job(failed) is None
    assert await queue.get_job(expiring) is not None  # moved by this sweep: kept until a later one
    clock.advance(10)
    assert await queue.sweep_expired() == 0
    assert await queue.get_job(expiring) is None

    clock.advance(timedelta(days=3650))
    assert await forever.sweep_expired() == 0
    assert await forever.get_job(kept_forever) is not None
    assert stored_rows(db_path) == 1


# --- batch ack, cancel, isolation --------------------------------------------------------------


@pytest.mark.asyncio
async def test_ack_batch_cancel_and_queue_isolation(store: SqliteStore, clock: ManualClock) -> None:
    queue, other, ids, foreign, handles = await three_of_four_claimed(store)
    assert await other.claim_one("w") is not None

    assert await queue.ack_batch([]) == 0
    assert await queue.ack_batch([ids[0], ids[0], "not-an-id", 2**70, foreign, ids[3]]) == 1
    assert await other.get_job(ids[1]) is None
    assert await other.cancel(ids[1]) is False
    clock.advance(10)
    assert await queue.ack_batch([h.job.id for h in handles]) == 0  # lapsed leases are not acked

    assert await queue.cancel(ids[1]) is True
    assert await queue.cancel(ids[1]) is False
    assert await queue.cancel("nope") is False
    assert await queue.get_job("nope") is None
    with pytest.raises(InvalidArgument):
        await queue.cancel(True)
    assert await handles[1].ack() is False


# --- validation and atomicity, checked on the file itself ----------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("payload", "options", "error"),
    [
        ({1, 2}, {}, PayloadError),
        (math.nan, {}, PayloadError),
        (b"bytes", {}, PayloadError),
        ("ok", {"delay": -1}, InvalidArgument),
        ("ok", {"run_at": datetime(2030, 1, 1)}, InvalidArgument),  # naive on purpose
        ("ok", {"priority": True}, InvalidArgument),
        ("ok", {"max_attempts": 0}, InvalidArgument),
        ("ok", {"expires": math.inf}, InvalidArgument),
    ],
)
async def test_invalid_enqueue_stores_nothing(
    store: SqliteStore, db_path: Path, payload: object, options: dict[str, object], error: type[Exception]
) -> None:
    queue = store.queue("validated")
    with pytest.raises(error):
        await queue.enqueue(payload, **options)  # type: ignore[arg-type]
    with pytest.raises(error):
        await queue.enqueue_many(["fine", payload], **options)  # type: ignore[arg-type]
    assert stored_rows(db_path) == 0


@pytest.mark.asyncio
async def test_enqueue_many_is_ordered_and_atomic(store: SqliteStore, db_path: Path, clock: ManualClock) -> None:
    queue = store.queue("bulk")
    with pytest.raises(InvalidArgument, match="payloads"):
        await queue.enqueue_many(iter(["a"]))  # type: ignore[arg-type]
    with pytest.raises(PayloadError):
        await queue.enqueue_many([{"ok": 1}, {"bad": {1}}, {"ok": 3}])
    assert stored_rows(db_path) == 0
    assert await queue.enqueue_many([]) == []

    payloads: list[object] = [{"i": i, "s": 'é\x00"\\'} for i in range(500)] + [None, 1.5, "\ud800"]
    ids = await queue.enqueue_many(tuple(payloads), priority=2, expires=60)
    assert len(ids) == len(set(ids)) == len(payloads)
    assert ids == sorted(ids)
    for job_id, payload in zip(ids, payloads, strict=True):
        job = await queue.get_job(job_id)
        assert job is not None
        assert job.payload == payload
        assert (job.priority, job.enqueued_at, job.expires_at) == (2, START, START + timedelta(seconds=60))
    assert stored_rows(db_path) == len(payloads)


@pytest.mark.asyncio
async def test_payload_snapshots_are_fresh(store: SqliteStore) -> None:
    queue = store.queue("fresh")
    job_id = await queue.enqueue({"list": [1]})
    job = await queue.get_job(job_id)
    assert job is not None
    job.payload["list"].append(2)  # type: ignore[index]
    again = await queue.get_job(job_id)
    assert again is not None
    assert again.payload == {"list": [1]}


# --- closed store ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_closed_store_refuses_everything(db_path: Path, clock: ManualClock) -> None:
    store = await open_store(db_path, clock=clock)
    queue, handle, job_id = await close_holding_a_claim(store, unclaimed=1)
    await assert_every_op_refused(queue, handle, job_id)
    assert stored_rows(db_path) == 2
    assert stored_rows(db_path, "state = 'processing'") == 1


@pytest.mark.asyncio
async def test_close_lets_the_ops_already_let_through_finish(db_path: Path, clock: ManualClock) -> None:
    """S3: an op that passed the closed check before ``close()`` runs on the open connection, however it queues.

    The database has no closed check of its own: it relies on every such op
    being in the statement gate's line before the shutdown asks for the gate.
    """
    store = await open_store(db_path, clock=clock)
    queue = store.queue("closing")
    singles = [asyncio.ensure_future(queue.enqueue(n)) for n in range(20)]
    batch = asyncio.ensure_future(queue.enqueue_many(list(range(5))))
    sweep = asyncio.ensure_future(queue.sweep_expired())
    last = asyncio.ensure_future(queue.enqueue("last"))
    await asyncio.sleep(0)  # each op runs to its first await: past the kit's check, into the gate's line
    await store.close()
    await asyncio.gather(*singles, batch, sweep, last)
    assert len(batch.result()) == 5
    assert stored_rows(db_path) == 26
    with pytest.raises(StoreClosed):
        await queue.enqueue("late")


# --- several stores, several processes, reopen ------------------------------------------------


async def _drain(store: SqliteStore, worker: str, seen: list[int]) -> None:
    queue = store.queue("shared")
    while True:
        handles = await queue.claim_batch(worker, 3)
        if not handles:
            return
        for handle in handles:
            seen.append(int(handle.job.id))
            assert await handle.ack() is True


@pytest.mark.asyncio
async def test_two_stores_on_one_file_drain_without_duplicates(db_path: Path) -> None:
    first = await open_store(db_path)
    second = await open_store(db_path)
    try:
        ids = await first.queue("shared").enqueue_many(list(range(300)))
        seen: list[int] = []
        await asyncio.gather(
            *(
                _drain(store, f"{store_no}-{task}", seen)
                for store_no, store in enumerate((first, second))
                for task in range(4)
            )
        )
        assert sorted(seen) == sorted(ids)
        assert stored_rows(db_path) == 0
    finally:
        await first.close()
        await second.close()


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from alkstore_sqlite import open_store

    async def main(path, worker):
        async with await open_store(path) as store:
            queue = store.queue("procs")
            if worker == "seed":
                await queue.enqueue_many(list(range(200)))
                return
            while handles := await queue.claim_batch(worker, 4):
                for handle in handles:
                    print(handle.job.id)
                    assert await handle.ack()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def test_processes_on_one_file_open_and_drain_without_duplicates(db_path: Path) -> None:
    """Three processes open one fresh file at once (racing to lay it out), then drain it (P2)."""
    seeder = subprocess.Popen([sys.executable, "-c", _CHILD, str(db_path), "seed"])
    workers = [
        subprocess.Popen([sys.executable, "-c", _CHILD, str(db_path), f"p{n}"], stdout=subprocess.PIPE, text=True)
        for n in range(2)
    ]
    assert seeder.wait(timeout=60) == 0
    outputs = [worker.communicate(timeout=60)[0] for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    handed_out = [int(line) for output in outputs for line in output.split()]
    # The workers may have finished before the seeder enqueued: drain what is left here.
    leftover: list[int] = []
    rest = subprocess.run(
        [sys.executable, "-c", _CHILD, str(db_path), "rest"], capture_output=True, text=True, check=True, timeout=60
    )
    leftover = [int(line) for line in rest.stdout.split()]
    everything = handed_out + leftover
    assert len(everything) == len(set(everything)) == 200
    assert stored_rows(db_path) == 0


@pytest.mark.asyncio
async def test_reopen_keeps_every_committed_change(db_path: Path, clock: ManualClock) -> None:
    async with await open_store(db_path, clock=clock) as store:
        queue = store.queue("durable", QueueOpts(visibility_timeout_s=60))
        acked, retried, failed, cancelled, leased = await queue.enqueue_many(["a", "r", "f", "c", "l"])
        handles = {h.job.id: h for h in await queue.claim_batch("w", 5)}
        assert await handles[acked].ack()
        assert await handles[retried].retry("again", delay=5)
        assert await handles[failed].fail("bad")
        assert await queue.cancel(cancelled)

    async with await open_store(db_path, clock=clock) as store:
        queue = store.queue("durable")
        assert await queue.get_job(acked) is None
        assert await queue.get_job(cancelled) is None
        job = await queue.get_job(retried)
        assert job is not None
        assert (job.state, job.last_error, job.run_at) == (
            JobState.READY,
            "again",
            START + timedelta(seconds=5),
        )
        job = await queue.get_job(failed)
        assert job is not None
        assert (job.state, job.last_error) == (JobState.DEAD, "bad")
        job = await queue.get_job(leased)
        assert job is not None
        assert job.state is JobState.PROCESSING
        assert job.lease_expires_at == START + timedelta(seconds=60)
        assert await queue.cancel(leased)  # the newest id
        newest = await queue.enqueue("new")
        assert isinstance(leased, int)
        assert isinstance(newest, int)
        assert newest > leased  # AUTOINCREMENT: ids of deleted jobs are never handed out again


@pytest.mark.asyncio
async def test_newer_layout_is_refused(db_path: Path) -> None:
    async with await open_store(db_path):
        pass
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(SchemaVersionError, match="99"):
        await open_store(db_path)


def _indexes(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"))
    finally:
        conn.close()


@pytest.mark.asyncio
async def test_layout_1_file_is_migrated_on_open_with_its_jobs(db_path: Path) -> None:
    """A file written by layout 1 gets migration 2's sweep indexes on open; its jobs read back unchanged."""
    write_layout_1(db_path)
    assert "jobs_lease" in _indexes(db_path)
    clock = ManualClock(START)
    async with await open_store(db_path, clock=clock) as store:
        queue = store.queue("q", QueueOpts(dead_letter_retention_s=60))
        kept = await queue.enqueue("kept")
        dying = await queue.enqueue("dying", expires=5)
        clock.advance(timedelta(seconds=5))
        assert await queue.sweep_expired() == 1
        clock.advance(timedelta(seconds=60))
        assert await queue.sweep_expired() == 0
        assert await queue.get_job(dying) is None
        job = await queue.get_job(kept)
        assert job is not None
        assert job.payload == "kept"
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    conn.close()
    indexes = _indexes(db_path)
    assert {"jobs_dead_purge", "jobs_live_expiry", "jobs_processing_lease"} <= set(indexes)
    assert not {"jobs_lease", "jobs_expiry"} & set(indexes)


def test_sweep_and_ack_batch_statements_use_their_indexes() -> None:
    """The purge and expiry sweeps are range scans of their own indexes; ``ack_batch`` looks ids up by key.

    SQLite uses an expression or partial index only where the statement says
    the indexed terms word for word: a change to either side would silently
    make the purge read every dead job kept, or ``ack_batch`` every job in flight.
    """
    conn = sqlite3.connect(":memory:")
    for statement in LAYOUT:
        conn.execute(statement)

    def plan(sql: str, **params: object) -> str:
        return " / ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))

    sweep = {"queue": "q", "now": 0, "last_error": "x"}
    assert "USING INDEX jobs_dead_purge" in plan(SqliteDriver.SWEEP_PURGE_SQL, **sweep)
    assert "USING INDEX jobs_live_expiry" in plan(SqliteDriver.SWEEP_EXPIRE_SQL, **sweep)
    assert "USING INDEX jobs_processing_lease" in plan(SqliteDriver.SWEEP_EXHAUSTED_SQL, **sweep)
    ack_batch = plan(SqliteDriver.ACK_BATCH_SQL, queue="q", now=0, ids="[1, 2]")
    assert "USING INTEGER PRIMARY KEY" in ack_batch
    assert "jobs_processing_lease" not in ack_batch
    conn.close()


# --- one connection, many tasks ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_sweeps_and_claims_share_one_store_safely(store: SqliteStore, clock: ManualClock) -> None:
    """Transactions (sweeps) and single statements (claims, acks) from many tasks on one connection."""
    queue = store.queue("mixed", QueueOpts(max_attempts=1))
    ids = await queue.enqueue_many(list(range(200)), expires=10)
    seen: list[int] = []

    async def claimer(worker: str) -> None:
        while handles := await queue.claim_batch(worker, 2):
            seen.extend(int(h.job.id) for h in handles)
            await asyncio.gather(*(h.ack() for h in handles))

    async def sweeper() -> int:
        return sum([await queue.sweep_expired() for _ in range(20)])

    results = await asyncio.gather(*(claimer(f"w{n}") for n in range(4)), sweeper(), sweeper())
    assert results[4:] == [0, 0]
    assert sorted(seen) == ids


@pytest.mark.asyncio
async def test_gate_survives_cancelled_waiters() -> None:
    gate = StatementGate()
    order: list[str] = []

    async def shared(name: str) -> None:
        async with gate.shared():
            order.append(name)

    async with gate.exclusive():
        blocked = asyncio.create_task(shared("cancelled"))
        waiting = asyncio.create_task(shared("served"))
        await asyncio.sleep(0)
        blocked.cancel()
        await asyncio.sleep(0)
    await asyncio.wait_for(waiting, timeout=1)
    assert blocked.cancelled()
    assert order == ["served"]
    async with gate.exclusive():  # nothing is left holding it
        pass


# --- the adapter ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_adapter_locations_and_oracle() -> None:
    assert adapter.name == "sqlite"
    assert adapter.capabilities == frozenset(Capability) - {Capability.NETWORKED, Capability.TRANSACTIONAL_ENQUEUE}
    assert await adapter.unavailable_reason() is None
    first, second = await adapter.create_location(), await adapter.create_location()
    assert first != second
    try:
        assert await adapter.count_stored_jobs(first) == 0
        store = await adapter.open_store(first, clock=ManualClock(START), seed=1)
        await store.queue("q").enqueue_many([1, 2, 3])
        assert await adapter.count_stored_jobs(first) == 3  # read while the store is still open
        await store.close()
        assert await adapter.count_stored_jobs(first) == 3
    finally:
        await adapter.drop_location(first)
        await adapter.drop_location(second)
    assert not Path(first).parent.exists()
