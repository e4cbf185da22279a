"""Engine-specific tests of alkstore_postgres against a real Postgres server.

The conformance rows pin the contract; these pin what only this engine has:
the server clock, the SKIP LOCKED claim and its plan, schema creation and
migration under concurrency, killed backends, and what lands in the table
(read through bare asyncpg connections, not the engine's classes).

Server: ``--alkstore-pg-dsn``, else ``$ALKSTORE_PG_DSN``, else the default DSN.
When it does not answer the tests skip, naming the DSN and the error, except
under ``CI`` or ``ALKSTORE_REQUIRE=1`` where they fail: a certification run
must never turn a missing server into a skip.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import asyncpg
import pytest
import pytest_asyncio
from alkstore_postgres import PgAdapter, PgStore, SchemaVersionError, ServerConnectionError, adapter, open_store
from alkstore_postgres.adapter import DSN_OPTION
from alkstore_postgres.connection import application_name
from alkstore_postgres.location import Location, new_schema_name, outage_bound_s, quote_ident
from alkstore_postgres.schema import LATEST_VERSION, ensure_schema

from alkstore_contract import (
    Capability,
    EngineAdapter,
    HandleSpent,
    InvalidArgument,
    InvalidName,
    JobState,
    ManualClock,
    PayloadError,
    QueueOpts,
    StoreClosed,
)
from alkstore_contract.adapter import NetworkedAdapter
from alkstore_contract.suite.expected import LAST_ERROR_EXPIRED, LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from tests.polling import until

START = datetime(2030, 1, 1, 12, 0, 0, 123457, tzinfo=UTC)
"""A manual clock's start with a microsecond part, so rounding slips would show."""


class OpenStore(Protocol):
    def __call__(self, clock: ManualClock | None = None, **kwargs: Any) -> Awaitable[PgStore]: ...


def server_dsn() -> str:
    """The server DSN, or a skip (a failure under CI / ALKSTORE_REQUIRE=1) naming the DSN and the error."""
    reason = asyncio.run(adapter.unavailable_reason())
    if reason is not None:
        if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(f"a Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
        pytest.skip(reason)
    return adapter.dsn


@pytest.fixture(scope="session")
def dsn() -> str:
    """The server DSN (``server_dsn``)."""
    return server_dsn()


async def connect(dsn: str) -> Any:
    return await asyncpg.connect(dsn)


@pytest_asyncio.fixture
async def schema(dsn: str) -> AsyncIterator[str]:
    """A fresh schema name for this test, dropped afterwards."""
    name = new_schema_name()
    yield name
    conn = await connect(dsn)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {quote_ident(name)} CASCADE")
    finally:
        await conn.close()


@pytest_asyncio.fixture
async def bare(dsn: str) -> AsyncIterator[Any]:
    """A bare asyncpg connection: the oracle, outside the engine."""
    conn = await connect(dsn)
    yield conn
    await conn.close()


@pytest_asyncio.fixture
async def stores(dsn: str, schema: str) -> AsyncIterator[OpenStore]:
    """Open stores on this test's schema; all are closed at teardown (before the schema is dropped)."""
    opened: list[PgStore] = []

    async def open_one(clock: ManualClock | None = None, **kwargs: Any) -> PgStore:
        store = await open_store(dsn, schema=schema, clock=clock, seed=kwargs.pop("seed", 7), **kwargs)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


async def count_rows(bare: Any, schema: str, where: str = "true") -> int:
    count: int = await bare.fetchval(f"SELECT count(*) FROM {quote_ident(schema)}.jobs WHERE {where}")
    return count


async def store_backends(bare: Any, schema: str, *, waiting_on_lock: bool = False) -> list[int]:
    """The pids of the store's backends, as the server sees them now.

    Inside a transaction the list of backends ``pg_stat_activity`` shows is
    read once and then served from a snapshot until the transaction ends, so a
    poll that first ran before the store opened a new connection (after its
    old backend was killed) would never see that backend, nor it block; the
    snapshot is discarded before every read.
    """
    await bare.execute("SELECT pg_stat_clear_snapshot()")
    query = "SELECT pid FROM pg_stat_activity WHERE application_name = $1"
    if waiting_on_lock:
        query += " AND wait_event_type = 'Lock'"
    return [row["pid"] for row in await bare.fetch(query, application_name(schema))]


async def terminate(bare: Any, pids: list[int]) -> None:
    """pg_terminate_backend, waiting (PG14+) until each backend has exited."""
    for pid in pids:
        assert await bare.fetchval("SELECT pg_terminate_backend($1, 5000)", pid)


@pytest.mark.asyncio
async def test_lifecycle_under_a_manual_clock(stores: OpenStore, bare: Any, schema: str) -> None:
    clock = ManualClock(START)
    store = await stores(clock)
    opts = QueueOpts(visibility_timeout_s=30, max_attempts=2, backoff_base_s=1, dead_letter_retention_s=60)
    queue = store.queue("lifecycle", opts)
    payload = {"k": [1, "ü", None, 1.5], "nested": {"deep": True}}
    job_id = await queue.enqueue(payload, priority=3)
    assert isinstance(job_id, int)
    assert json.loads(json.dumps(job_id)) == job_id

    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.state, job.payload, job.priority, job.attempts) == (JobState.READY, payload, 3, 0)
    assert job.enqueued_at == job.run_at == START
    assert (job.visibility_timeout_s, job.max_attempts, job.backoff_base_s, job.dead_letter_retention_s) == (
        30.0,
        2,
        1.0,
        60.0,
    )

    handle = await queue.claim_one("worker-1")
    assert handle is not None
    assert handle.job.state == JobState.PROCESSING
    assert handle.job.attempts == 1
    assert handle.job.claimed_by == "worker-1"
    assert handle.job.lease_expires_at == START + timedelta(seconds=30)
    assert await queue.claim_one("worker-2") is None

    clock.advance(10)
    assert await handle.heartbeat(5)
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.lease_expires_at == clock.now() + timedelta(seconds=5)

    assert await handle.retry("boom", delay=2.5)
    with pytest.raises(HandleSpent):
        await handle.ack()
    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.state, job.last_error, job.lease_expires_at, job.claimed_by) == (JobState.READY, "boom", None, None)
    assert job.run_at == clock.now() + timedelta(seconds=2.5)
    assert await queue.claim_one("worker-1") is None

    clock.advance(2.5)
    handle = await queue.claim_one("worker-1")
    assert handle is not None
    assert handle.job.attempts == 2
    assert await handle.retry()
    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.state, job.last_error, job.died_at) == (JobState.DEAD, LAST_ERROR_MAX_ATTEMPTS, clock.now())

    clock.advance(59)
    assert await queue.sweep_expired() == 0
    assert await queue.get_job(job_id) is not None
    clock.advance(1)
    assert await queue.sweep_expired() == 0
    assert await queue.get_job(job_id) is None, "retention elapsed: the dead job is purged"

    acked, failed, cancelled = await queue.enqueue_many(["a", "b", "c"])
    handles = {h.job.id: h for h in await queue.claim_batch("worker-1", 3)}
    assert set(handles) == {acked, failed, cancelled}
    assert await handles[acked].ack()
    assert await handles[failed].fail()
    failed_job = await queue.get_job(failed)
    assert failed_job is not None
    assert (failed_job.state, failed_job.last_error) == (JobState.DEAD, LAST_ERROR_FAILED)
    assert await queue.cancel(cancelled)
    assert not await handles[cancelled].heartbeat()
    assert await count_rows(bare, schema) == 1

    await store.close()
    await store.close()
    with pytest.raises(StoreClosed):
        await queue.enqueue("after close")
    assert await count_rows(bare, schema) == 1


@pytest.mark.asyncio
async def test_reclaim_fences_out_the_old_handle(stores: OpenStore) -> None:
    clock = ManualClock(START)
    store_a = await stores(clock)
    store_b = await stores(clock)
    opts = QueueOpts(visibility_timeout_s=10, max_attempts=5)
    job_id = await store_a.queue("fence", opts).enqueue({"n": 1})
    old = await store_a.queue("fence", opts).claim_one("old-worker")
    assert old is not None

    clock.advance(10)
    assert not await old.heartbeat(), "a heartbeat at the deadline is too late (H3)"
    new = await store_b.queue("fence", opts).claim_one("new-worker")
    assert new is not None
    assert new.job.id == job_id
    assert new.job.attempts == 2

    assert not await old.heartbeat()
    assert not await old.ack()
    with pytest.raises(HandleSpent):
        await old.fail()
    job = await store_a.queue("fence", opts).get_job(job_id)
    assert job is not None
    assert (job.state, job.claimed_by) == (JobState.PROCESSING, "new-worker")
    assert await new.ack()


@pytest.mark.asyncio
async def test_default_clock_is_the_servers(stores: OpenStore, bare: Any) -> None:
    store = await stores(None)
    queue = store.queue("server-clock", QueueOpts(visibility_timeout_s=120))
    before = await bare.fetchval("SELECT clock_timestamp()")
    delayed = await queue.enqueue("later", delay=10, expires=30)
    ready = await queue.enqueue("now")
    handle = await queue.claim_one("w")
    after = await bare.fetchval("SELECT clock_timestamp()")

    job = await queue.get_job(delayed)
    assert job is not None
    assert before <= job.enqueued_at <= after
    assert job.run_at - job.enqueued_at == timedelta(seconds=10), "delay added to the same server now"
    assert job.expires_at is not None
    assert job.expires_at - job.enqueued_at == timedelta(seconds=30)
    assert handle is not None
    assert handle.job.id == ready
    assert handle.job.lease_expires_at is not None
    assert before + timedelta(seconds=120) <= handle.job.lease_expires_at <= after + timedelta(seconds=120)

    injected = await stores(ManualClock(START))
    other = await injected.queue("server-clock").enqueue("injected")
    other_job = await injected.queue("server-clock").get_job(other)
    assert other_job is not None
    assert other_job.enqueued_at == START, "an injected clock overrides the server's (T3)"


@pytest.mark.asyncio
async def test_durations_land_exactly_where_the_contract_puts_them(stores: OpenStore) -> None:
    """Lease, delay, expiry, heartbeat and retry instants equal ``now + timedelta(seconds=x)`` to the µs."""
    clock = ManualClock(START)
    store = await stores(clock)
    rng = random.Random(2024)
    tricky = [1.0000005, 0.0000015, 1234.5678915, 3000.0000005, 86399.9999995]
    for index, seconds in enumerate(tricky + [rng.uniform(0, 10 ** rng.randint(0, 7)) for _ in range(25)]):
        queue = store.queue(f"q{index}", QueueOpts(visibility_timeout_s=seconds, max_attempts=3))
        delayed = await queue.enqueue("d", delay=seconds, expires=seconds * 2)
        job = await queue.get_job(delayed)
        assert job is not None
        assert job.run_at == START + timedelta(seconds=seconds)
        assert job.expires_at == START + timedelta(seconds=seconds * 2)
        await queue.cancel(delayed)

        await queue.enqueue("c")
        handle = await queue.claim_one("w")
        assert handle is not None
        assert handle.job.lease_expires_at == START + timedelta(seconds=seconds), seconds
        assert await handle.heartbeat(seconds * 3)
        job = await queue.get_job(handle.job.id)
        assert job is not None
        assert job.lease_expires_at == START + timedelta(seconds=seconds * 3)
        assert await handle.retry(delay=seconds / 7)
        job = await queue.get_job(handle.job.id)
        assert job is not None
        assert job.run_at == START + timedelta(seconds=seconds / 7)


@pytest.mark.asyncio
async def test_the_first_and_last_instants_come_back_as_they_went_in(stores: OpenStore) -> None:
    """E3: asyncpg sends ``datetime.min``/``max`` as -infinity/infinity and reads those back naive.

    ``tests/test_hostile_input.py`` drew a ``run_at`` of year 1 one run in a few
    and got ``datetime(1, 1, 1)`` back without its time zone.
    """
    store = await stores(ManualClock(START))
    queue = store.queue("edges")
    for run_at in (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)):
        job = await queue.get_job(await queue.enqueue("x", run_at=run_at))
        assert job is not None
        assert job.run_at.tzinfo is not None, f"E3: run_at {run_at!r} came back {job.run_at!r}"
        assert job.run_at == run_at, f"E3: run_at {run_at!r} came back {job.run_at!r}"
    handle = await queue.claim_one("w")
    assert handle is not None
    assert handle.job.run_at == datetime.min.replace(tzinfo=UTC)


@pytest.mark.asyncio
async def test_payloads_round_trip_through_text(stores: OpenStore) -> None:
    """A jsonb column would reject ``\\u0000`` and turn 1e300 into a 301-digit int; text keeps them."""
    store = await stores(ManualClock(START))
    queue = store.queue("payloads")
    payloads: list[object] = ["nul\u0000byte", {"big": 1e300, "tiny": 5e-324}, 2**70, [{"b": 1, "a": 2}], None, -0.5]
    ids = await queue.enqueue_many(payloads)
    for job_id, payload in zip(ids, payloads, strict=True):
        job = await queue.get_job(job_id)
        assert job is not None
        assert job.payload == payload
        assert type(job.payload) is type(payload)


@pytest.mark.asyncio
async def test_claim_batch_never_marks_more_than_n(stores: OpenStore, bare: Any, schema: str) -> None:
    clock = ManualClock(START)
    workers = [await stores(clock, max_size=4) for _ in range(3)]
    total, n = 100, 7
    ids = await workers[0].queue("batch").enqueue_many(list(range(total)))

    calls = [workers[i % 3].queue("batch").claim_batch(f"w{i}", n) for i in range(12)]
    batches = await asyncio.gather(*calls)
    per_worker = dict(
        await bare.fetch(
            f"SELECT claimed_by, count(*) FROM {quote_ident(schema)}.jobs WHERE state = 'processing' GROUP BY 1"
        )
    )
    for i, batch in enumerate(batches):
        assert len(batch) <= n
        assert per_worker.get(f"w{i}", 0) == len(batch), "the table holds exactly the rows handed out"
    claimed = [h.job.id for batch in batches for h in batch]
    assert len(claimed) == len(set(claimed)) == await count_rows(bare, schema, "state = 'processing'")

    while True:
        more = await asyncio.gather(*(w.queue("batch").claim_batch("drain", n) for w in workers))
        if not any(more):
            break
        assert all(len(batch) <= n for batch in more)
        claimed += [h.job.id for batch in more for h in batch]
    assert sorted(claimed) == sorted(ids), "every job handed out exactly once"


@pytest.mark.asyncio
async def test_claim_query_is_an_index_scan_on_a_large_backlog(stores: OpenStore, bare: Any, schema: str) -> None:
    store = await stores(None)
    await store.queue("backlog").enqueue_many([{"n": i} for i in range(50_000)])
    await store.queue("other").enqueue_many([{"n": i} for i in range(2_000)])
    await bare.execute(f"ANALYZE {quote_ident(schema)}.jobs")
    claim = store.driver.sql(store.driver.CLAIM_SQL)
    plan = "\n".join(row[0] for row in await bare.fetch(f"EXPLAIN {claim}", None, "backlog", 10, "w", "token"))
    assert "Seq Scan on jobs" not in plan, plan
    assert "Index Scan using jobs_ready_claim on jobs" in plan, plan
    assert "Index Scan using jobs_processing_lease on jobs" in plan, plan
    assert "Tid Scan on jobs j" in plan, plan

    handles = await store.queue("backlog").claim_batch("w", 10)
    assert [h.job.payload for h in handles] == [{"n": i} for i in range(10)]


@pytest.mark.asyncio
async def test_killed_backend_mid_operation_loses_and_duplicates_nothing(
    stores: OpenStore, bare: Any, schema: str
) -> None:
    store = await stores(ManualClock(START), max_size=1)
    queue = store.queue("faults")
    ids = await queue.enqueue_many(list(range(10)))
    table = f"{quote_ident(schema)}.jobs"

    for op in (lambda: queue.enqueue("in flight"), lambda: queue.claim_batch("w", 10)):
        async with bare.transaction():
            # SHARE blocks every write to the table, so the op waits on the server, in flight, until killed.
            await bare.execute(f"LOCK TABLE {table} IN SHARE MODE")
            task = asyncio.ensure_future(op())
            pids = await until(lambda: store_backends(bare, schema, waiting_on_lock=True), "the op to block")
            await terminate(bare, pids)
            with pytest.raises(ServerConnectionError, match="may or may not have taken effect"):
                await task
        assert await count_rows(bare, schema) == 10, "the killed statement stored nothing"
        assert await count_rows(bare, schema, "state = 'processing'") == 0, "and claimed nothing"

    handles = await queue.claim_batch("w", 20)
    assert sorted(h.job.id for h in handles) == ids, "the next op works and sees every job once"
    assert await queue.ack_batch(ids) == 10
    assert await count_rows(bare, schema) == 0


@pytest.mark.asyncio
async def test_the_backend_poll_sees_a_backend_that_connected_after_a_first_poll_in_the_same_transaction(
    stores: OpenStore, bare: Any, schema: str
) -> None:
    """The race the test above can lose on its second op, made certain.

    Its first op's backend was killed, so the second op opens a new
    connection; a poll that ran in the same transaction before that backend
    existed must still find it.
    """
    store = await stores(ManualClock(START), max_size=1)
    queue = store.queue("poll")
    await queue.enqueue("the store's connection is open")
    async with bare.transaction():
        await bare.execute(f"LOCK TABLE {quote_ident(schema)}.jobs IN SHARE MODE")
        first = await store_backends(bare, schema)
        await terminate(bare, first)
        task = asyncio.ensure_future(queue.enqueue("blocked on a new connection"))
        pids = await until(lambda: store_backends(bare, schema, waiting_on_lock=True), "the op to block")
        assert set(pids).isdisjoint(first), "the blocked op runs on the new connection"
        await terminate(bare, pids)
        with pytest.raises(ServerConnectionError):
            await task


@pytest.mark.asyncio
async def test_pool_replaces_a_killed_idle_connection(stores: OpenStore, bare: Any, schema: str) -> None:
    store = await stores(ManualClock(START), max_size=1)
    queue = store.queue("idle")
    job_id = await queue.enqueue("x")
    (first_pid,) = await store_backends(bare, schema)
    await terminate(bare, [first_pid])
    # The pool notices the closed socket on its next event-loop turn; an op racing that turn fails
    # with ServerConnectionError like the in-flight case above, and the one after it succeeds.
    await asyncio.sleep(0.2)
    assert await queue.get_job(job_id) is not None
    (second_pid,) = await store_backends(bare, schema)
    assert second_pid != first_pid


@pytest.mark.asyncio
async def test_concurrent_openers_create_the_schema_once(dsn: str, schema: str, bare: Any) -> None:
    opened = await asyncio.gather(*(open_store(dsn, schema=schema, min_size=1, max_size=1) for _ in range(8)))
    try:
        rows = await bare.fetch(f"SELECT version FROM {quote_ident(schema)}.schema_version")
        assert [row["version"] for row in rows] == [LATEST_VERSION]
        ids = await asyncio.gather(*(store.queue("q").enqueue(i) for i, store in enumerate(opened)))
        assert len(set(ids)) == 8, "all eight stores share one table"
    finally:
        for store in opened:
            await store.close()


@pytest.mark.asyncio
async def test_opening_an_older_schema_migrates_it(dsn: str, schema: str, bare: Any) -> None:
    quoted = quote_ident(schema)
    assert await ensure_schema(bare, schema, target=1) == 1
    assert await bare.fetchval("SELECT to_regclass($1)", f"{quoted}.jobs_ready_claim") is None

    store = await open_store(dsn, schema=schema)
    await store.close()
    assert await bare.fetchval(f"SELECT version FROM {quoted}.schema_version") == LATEST_VERSION
    assert await bare.fetchval("SELECT to_regclass($1)", f"{quoted}.jobs_ready_claim") is not None
    reloptions = await bare.fetchval("SELECT reloptions FROM pg_class WHERE oid = $1::regclass", f"{quoted}.jobs")
    assert "autovacuum_vacuum_scale_factor=0.01" in reloptions

    await bare.execute(f"UPDATE {quoted}.schema_version SET version = {LATEST_VERSION + 1}")
    with pytest.raises(SchemaVersionError, match="newer than this alkstore knows"):
        await open_store(dsn, schema=schema)


@pytest.mark.asyncio
async def test_invalid_input_stores_nothing(stores: OpenStore, bare: Any, schema: str) -> None:
    store = await stores(ManualClock(START))
    queue = store.queue("validation")
    bad_calls: list[tuple[type[Exception], Callable[[], Awaitable[object]]]] = [
        (PayloadError, lambda: queue.enqueue({1, 2})),
        (PayloadError, lambda: queue.enqueue(math.nan)),
        (PayloadError, lambda: queue.enqueue_many([1, 2, b"bytes"])),
        (InvalidArgument, lambda: queue.enqueue_many("not a list")),
        (InvalidArgument, lambda: queue.enqueue(1, delay=-1)),
        (InvalidArgument, lambda: queue.enqueue(1, expires=math.inf)),
        (InvalidArgument, lambda: queue.enqueue(1, run_at=datetime(2030, 1, 1))),
        (InvalidArgument, lambda: queue.enqueue(1, priority="1")),  # type: ignore[arg-type]
        (InvalidArgument, lambda: queue.enqueue_many([1, 2], max_attempts=0)),
        (InvalidName, lambda: queue.claim_batch("", 1)),
    ]
    for error, call in bad_calls:
        with pytest.raises(error):
            await call()
    with pytest.raises(InvalidName):
        store.queue("__reserved")
    assert await count_rows(bare, schema) == 0
    assert await queue.claim_batch("w", -1) == []
    assert await queue.get_job("not-an-int-id") is None
    assert not await queue.cancel(2**80)
    assert await queue.ack_batch(["x", 2**80]) == 0
    held = [await queue.enqueue(n) for n in range(2)]
    assert len(await queue.claim_batch("w", 2)) == 2
    assert await queue.ack_batch([held[0], "x", 2**80, -(2**80)]) == 1, "foreign ids beside a real one are not found"
    assert await queue.ack_batch([IntSubclass(held[1])]) == 1, "an int of another type names the job it equals"


class IntSubclass(int):
    """An id that is an int without being exactly one (the kit accepts any int but bool)."""


@pytest.mark.asyncio
async def test_concurrent_sweeps_move_each_job_once(stores: OpenStore, bare: Any, schema: str) -> None:
    clock = ManualClock(START)
    sweepers = [await stores(clock, max_size=2) for _ in range(4)]
    opts = QueueOpts(visibility_timeout_s=5, max_attempts=1)
    queue = sweepers[0].queue("sweep", opts)
    await queue.enqueue_many(list(range(50)))
    assert len(await queue.claim_batch("w", 50)) == 50
    await queue.enqueue_many(list(range(150)), expires=10)
    clock.advance(10)
    counts = await asyncio.gather(*(s.queue("sweep", opts).sweep_expired() for s in sweepers for _ in range(3)))
    assert sum(counts) == 200
    assert await count_rows(bare, schema, f"state = 'dead' AND last_error = '{LAST_ERROR_EXPIRED}'") == 150
    assert await count_rows(bare, schema, f"state = 'dead' AND last_error = '{LAST_ERROR_MAX_ATTEMPTS}'") == 50


@pytest.mark.asyncio
async def test_adapter_locations(dsn: str) -> None:
    checked: EngineAdapter = adapter
    assert isinstance(checked, EngineAdapter)
    assert adapter.name == "postgres"
    assert adapter.capabilities == frozenset(Capability)
    assert isinstance(adapter, NetworkedAdapter)
    location = await adapter.create_location()
    parsed = Location.decode(location)
    assert parsed.dsn == dsn
    assert parsed.schema.startswith("alk_")
    try:
        assert await adapter.count_stored_jobs(location) == 0
        store = await adapter.open_store(location, clock=ManualClock(START), seed=1)
        async with store:
            await store.queue("q").enqueue_many([1, 2, 3])
        assert await adapter.count_stored_jobs(location) == 3
    finally:
        await adapter.drop_location(location)
    conn = await connect(dsn)
    try:
        assert await conn.fetchval("SELECT to_regnamespace($1)", quote_ident(parsed.schema)) is None
    finally:
        await conn.close()


def test_location_via_swaps_host_and_port_and_carries_short_timeouts() -> None:
    location = Location(dsn="postgresql://u:pw@db.example:6543/app?sslmode=disable", schema="alk_x").encode()
    assert adapter.server_address(location) == ("db.example", 6543)
    via = Location.decode(adapter.location_via(location, "127.0.0.1", 40000))
    assert via.dsn == "postgresql://u:pw@127.0.0.1:40000/app?sslmode=disable"
    assert via.schema == "alk_x"
    assert via.op_timeout_s is not None
    assert via.connect_timeout_s is not None
    assert adapter.op_timeout_s == outage_bound_s(via.op_timeout_s, via.connect_timeout_s)
    assert adapter.reconnect_within_s >= adapter.op_timeout_s
    assert adapter.server_address(Location(dsn="postgresql://u@h/db", schema="s").encode()) == ("h", 5432)
    with pytest.raises(InvalidArgument, match="op_timeout_s must be a positive number"):
        Location.decode('{"dsn": "postgresql://h/db", "schema": "s", "op_timeout_s": 0}')


@pytest.mark.asyncio
async def test_timeouts_are_validated_before_connecting() -> None:
    for arg in ("op_timeout_s", "connect_timeout_s"):
        for bad in (0, -1.0, True, "5"):
            with pytest.raises(InvalidArgument, match=f"{arg}="):
                await open_store("postgresql://nobody@127.0.0.1:1/nowhere", **{arg: bad})  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_unavailable_reason_names_the_dsn_and_the_error() -> None:
    unreachable = PgAdapter()
    unreachable.configure({DSN_OPTION.ini: "postgresql://nobody:secret@127.0.0.1:1/nowhere"})
    reason = await unreachable.unavailable_reason()
    assert reason is not None
    assert "postgresql://nobody:***@127.0.0.1:1/nowhere" in reason
    assert "secret" not in reason
    assert "Error" in reason
    assert "ci/" not in reason, "a user who installed the package has no ci/ directory"


def test_the_adapter_imports_without_asyncpg() -> None:
    """pytest must start, and the adapter must explain itself, where the postgres extra is missing."""
    code = (
        "import asyncio, sys\n"
        "sys.modules['asyncpg'] = None\n"
        "import alkstore_contract.suite.plugin\n"
        "from alkstore_postgres import adapter\n"
        "print(asyncio.run(adapter.unavailable_reason()))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "asyncpg is not installed" in result.stdout


def test_dsn_precedence_is_option_then_env_then_ini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nalkstore_pg_dsn = postgresql://from-ini@127.0.0.1:1/db\n")
    pytester.makepyfile(
        "from alkstore_postgres import adapter\n"
        "def test_dsn():\n"
        "    assert adapter.dsn == __import__('os').environ['EXPECTED_DSN']\n"
    )
    cases = [
        (None, [], "postgresql://from-ini@127.0.0.1:1/db", "ini alkstore_pg_dsn"),
        ("postgresql://from-env@127.0.0.1:1/db", [], "postgresql://from-env@127.0.0.1:1/db", "$ALKSTORE_PG_DSN"),
        (
            "postgresql://from-env@127.0.0.1:1/db",
            ["--alkstore-pg-dsn=postgresql://from-option@127.0.0.1:1/db"],
            "postgresql://from-option@127.0.0.1:1/db",
            "--alkstore-pg-dsn",
        ),
    ]
    for env, args, expected, source in cases:
        if env is None:
            monkeypatch.delenv("ALKSTORE_PG_DSN", raising=False)
        else:
            monkeypatch.setenv("ALKSTORE_PG_DSN", env)
        monkeypatch.setenv("EXPECTED_DSN", expected)
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--alkstore-engine=postgres", "-k", "test_dsn", *args
        )
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines([f"alkstore engine postgres --alkstore-pg-dsn={expected} (from {source})"])


def test_the_oracle_keeps_one_connection_per_loop_and_closes_it_with_the_loop() -> None:
    """``count_stored_jobs`` reads over one bare connection per event loop, closed when the loop ends.

    The suite counts after every ``model_based`` program: a connection per count was a backend's start
    and exit on the server each time. If this fails, check ``alkstore_postgres/oracle.py``.
    """
    pg = PgAdapter()
    pg.configure({DSN_OPTION.ini: server_dsn()})

    async def oracle_backends(location: str) -> int:
        parsed = Location.decode(location)
        bare = await asyncpg.connect(parsed.dsn)
        try:
            found: int = await bare.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
                f"SELECT count(*) FROM {quote_ident(parsed.schema)}.jobs%",
            )
        finally:
            await bare.close()
        return found

    async def counts() -> tuple[str, list[int], int]:
        location = await pg.create_location()
        seen = [await pg.count_stored_jobs(location) for _ in range(3)]
        return location, seen, await oracle_backends(location)

    async def gone(location: str) -> bool:
        """The server ends a backend a moment after its client hung up: look for up to 10 s."""
        for _ in range(100):
            if await oracle_backends(location) == 0:
                return True
            await asyncio.sleep(0.1)
        return False

    location, seen, during = asyncio.run(counts())
    try:
        assert seen == [0, 0, 0]
        assert during == 1, f"{during} backends ran the oracle's count while the loop ran: one connection, kept"
        assert asyncio.run(gone(location)), "the oracle's connection outlived its event loop"
    finally:
        asyncio.run(pg.drop_location(location))
