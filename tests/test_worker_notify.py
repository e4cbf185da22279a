"""Postgres LISTEN/NOTIFY wakes an idle worker, and keeps doing so after its connection is cut.

The worker's polling is set to 30 s from its first idle wait on, so a job
picked up within a few seconds was picked up because a notification arrived; the LISTEN connection runs
through the suite's fault proxy, which resets it mid-test. Real server:
``$ALKSTORE_PG_DSN`` or the default DSN, a fresh schema, dropped after.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from alkstore_postgres import PostgresSource
from alkstore_postgres.location import new_schema_name, quote_ident
from alkstore_postgres.worker import PgNotifyWaker

from alkstore_contract.suite.fault_proxy import FaultProxy
from alkstore_worker import App, Worker, WorkerOptions
from tests.test_worker_runtime import pg_dsn

PICKED_UP_WITHIN_S = 5.0
POLL_S = 30.0


def _via(dsn: str, address: tuple[str, int]) -> str:
    parts = urlsplit(dsn)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{address[0]}:{address[1]}" if userinfo else f"{address[0]}:{address[1]}"
    return urlunsplit(parts._replace(netloc=netloc))


async def _until(condition: object, what: str, within_s: float) -> float:
    started = time.monotonic()
    while not condition():  # type: ignore[operator]
        if time.monotonic() - started > within_s:
            raise AssertionError(f"not within {within_s:g} s: {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - started


@pytest.mark.asyncio
async def test_listen_notify_wakes_the_worker_and_recovers_from_a_cut_connection() -> None:
    dsn = await pg_dsn()
    schema = new_schema_name()
    server = urlsplit(dsn)
    async with FaultProxy(server.hostname or "127.0.0.1", server.port or 5432) as proxy:
        app = App(PostgresSource(dsn, schema, listen_dsn=_via(dsn, proxy.address)))
        ran: list[object] = []

        @app.task(queue="notified")
        async def record(payload: object) -> None:
            ran.append(payload)

        worker = Worker(app, WorkerOptions(poll_min_s=POLL_S, poll_max_s=POLL_S, sweep_interval_s=0))
        serving = asyncio.create_task(worker.run())
        try:
            await asyncio.wait_for(worker.started.wait(), 20)
            waker = worker.waker
            assert isinstance(waker, PgNotifyWaker)
            await asyncio.wait_for(waker.listening.wait(), 10)
            await asyncio.sleep(0.5)  # the loop's first claim found nothing: it waits 30 s unless notified
            await record.defer("before the cut")
            await _until(lambda: ran == ["before the cut"], "a notified job picked up", PICKED_UP_WITHIN_S)

            assert proxy.reset() >= 1, "the cut reached the LISTEN connection"
            await _until(lambda: waker.connects >= 2 and waker.listening.is_set(), "LISTEN reconnected", 10)
            await asyncio.sleep(0.5)
            await record.defer("after the cut")
            await _until(lambda: ran[-1:] == ["after the cut"], "a job picked up after the cut", PICKED_UP_WITHIN_S)
            assert waker.notifications >= 2
        finally:
            worker.stop()
            await asyncio.wait_for(serving, 30)
            await app.close()
            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
            finally:
                await connection.close()


@pytest.mark.asyncio
async def test_enable_notify_is_idempotent_and_disable_removes_the_trigger() -> None:
    import alkstore_postgres
    from alkstore_postgres.notify import disable_notify, enable_notify, notify_channel

    dsn = await pg_dsn()
    schema = new_schema_name()
    store = await alkstore_postgres.open_store(dsn, schema=schema)
    connection = await asyncpg.connect(dsn)
    heard: list[str] = []
    try:
        assert await enable_notify(connection, schema) == notify_channel(schema)
        assert await enable_notify(connection, schema) == notify_channel(schema)
        listener = await asyncpg.connect(dsn)
        try:
            await listener.add_listener(notify_channel(schema), lambda *args: heard.append(args[2]))
            await store.queue("q").enqueue_many([1, 2, 3])
            await _until(lambda: len(heard) == 1, "one notification for one enqueue statement", 5)
            await disable_notify(connection, schema)
            await store.queue("q").enqueue(4)
            await asyncio.sleep(0.3)
            assert len(heard) == 1, "no notification once the trigger is removed"
        finally:
            await listener.close()
        triggers = await connection.fetchval(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal",
            f"{quote_ident(schema)}.jobs",
        )
        assert triggers == 0
    finally:
        await store.close()
        await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
        await connection.close()
