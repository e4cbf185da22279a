"""The connections a Postgres store holds between statements (``alkstore_postgres.held``), against a real server.

A store keeps a connection whose statement returned on a stack of its own
instead of releasing it to asyncpg's pool, and everything else still goes
through the pool. These tests pin what that must not change (contract N1,
N2, N3 ride on it): a statement that raised gives its connection back; a
connection the server killed while it sat on the stack is never used again;
a checkout waiting on the pool gets the next connection released; unused
connections go back to the pool; closing hands every one back. If one
fails, check ``HeldConnections`` (acquire, fetch, ``_keep``, the trim).
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from alkstore_postgres import PgStore, held
from alkstore_postgres.location import quote_ident

from alkstore_contract import ManualClock
from tests.test_postgres_engine import START, OpenStore, bare, dsn, schema, store_backends, stores, terminate

__all__ = ["bare", "dsn", "schema", "stores"]


async def hold(store: PgStore, connections: int) -> None:
    """Make the store check out ``connections`` connections at once (each statement holds one for 0.3 s)."""
    await asyncio.gather(*(store.driver.fetch("hold", "SELECT pg_sleep(0.3)") for _ in range(connections)))


@pytest.mark.asyncio
async def test_a_statement_that_succeeded_keeps_its_connection_for_the_next(stores: OpenStore) -> None:
    """One worker's statements run on one connection, with no checkout from the pool between them."""
    store = await stores(ManualClock(START))
    queue = store.queue("held")
    pool = store.driver._pool
    await queue.enqueue("a")
    idle_in_pool = pool.get_idle_size()
    for payload in range(20):
        await queue.enqueue(payload)
    assert len(store.driver.connections._idle) == 1, "the one connection in use is back on the store's stack"
    assert pool.get_idle_size() == idle_in_pool, "nothing was released to the pool between statements"


@pytest.mark.asyncio
async def test_a_statement_that_raised_gives_its_connection_back_to_the_pool(stores: OpenStore, schema: str) -> None:
    """N2: whatever a failed statement left on its connection, the stack never hands that connection out."""
    store = await stores(ManualClock(START))
    queue = store.queue("held")
    await queue.enqueue("a")
    assert len(store.driver.connections._idle) == 1
    with pytest.raises(asyncpg.exceptions.UndefinedTableError):
        await store.driver.fetch("broken", f"SELECT 1 FROM {quote_ident(schema)}.no_such_table")
    assert store.driver.connections._idle == [], "the failed statement's connection went to the pool, not the stack"
    assert await queue.enqueue("b") is not None


@pytest.mark.asyncio
async def test_a_connection_killed_on_the_stack_is_not_used_again(stores: OpenStore, bare: Any, schema: str) -> None:
    """N2: asyncpg detaches a connection the server closed; taking it off the stack skips it."""
    store = await stores(ManualClock(START), max_size=2)
    queue = store.queue("held")
    await hold(store, 2)
    pids = await store_backends(bare, schema)
    assert len(pids) == 2
    assert len(store.driver.connections._idle) == 2
    await terminate(bare, pids)
    await asyncio.sleep(0.2)  # asyncpg notices the closed sockets on its next turns of the loop
    assert await queue.enqueue("c") is not None
    (fresh,) = await store_backends(bare, schema)
    assert fresh not in pids


@pytest.mark.asyncio
async def test_a_checkout_waiting_on_the_pool_gets_the_next_release(stores: OpenStore) -> None:
    """With more statements in flight than the pool holds, a release goes to the waiter, not onto the stack.

    Kept on the stack instead, the connection would wait there while the
    checkout timed out after ``connect_timeout_s`` (StoreUnavailable for no outage).
    """
    store = await stores(ManualClock(START), max_size=1, connect_timeout_s=2.0)
    queue = store.queue("held")
    ids = await asyncio.gather(*(queue.enqueue(n) for n in range(8)))
    assert len(set(ids)) == 8


@pytest.mark.asyncio
async def test_connections_no_statement_needed_go_back_to_the_pool(
    stores: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a burst, the connections the steady load no longer needs return to the pool (which trims to min_size)."""
    monkeypatch.setattr(held, "TRIM_S", 0.2)
    store = await stores(ManualClock(START), max_size=4)
    queue = store.queue("held")
    await hold(store, 4)
    assert len(store.driver.connections._idle) == 4
    for n in range(8):
        await queue.enqueue(n)
        await asyncio.sleep(0.06)
    assert len(store.driver.connections._idle) == 1, "one connection serves one worker; three went back"
    assert store.driver._pool.get_idle_size() >= 3


@pytest.mark.asyncio
async def test_one_release_in_rotate_every_goes_through_the_pool(
    stores: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool's own upkeep of a connection (max_queries, expiry) still sees every connection now and then."""
    monkeypatch.setattr(held, "ROTATE_EVERY", 5)
    store = await stores(ManualClock(START))
    queue = store.queue("held")
    pool = store.driver._pool
    released = 0
    original = type(pool).release

    async def counting_release(self: Any, conn: Any, **kwargs: Any) -> None:
        nonlocal released
        released += self is pool
        await original(self, conn, **kwargs)

    monkeypatch.setattr(type(pool), "release", counting_release)
    for n in range(20):
        await queue.enqueue(n)
    assert released == 4


@pytest.mark.asyncio
async def test_closing_hands_every_held_connection_back(stores: OpenStore, bare: Any, schema: str) -> None:
    store = await stores(ManualClock(START), max_size=3)
    await hold(store, 3)
    assert len(store.driver.connections._idle) == 3
    await store.close()
    assert store.driver.connections._idle == []
    assert await store_backends(bare, schema) == []


@pytest.mark.asyncio
async def test_a_held_connection_prepares_each_statement_once_and_forgets_them_when_given_back(
    stores: OpenStore, schema: str
) -> None:
    """Statements run prepared on their connection; a connection back in the pool keeps none of ours."""
    store = await stores(ManualClock(START))
    queue = store.queue("held")
    connections = store.driver.connections
    for payload in range(5):
        await queue.enqueue(payload)
    (conn,) = connections._idle
    assert list(connections._prepared) == [conn]
    assert len(connections._prepared[conn]) == 1, "five enqueues, one statement prepared"
    with pytest.raises(asyncpg.exceptions.UndefinedTableError):
        await store.driver.fetch("broken", f"SELECT 1 FROM {quote_ident(schema)}.no_such_table")
    assert connections._prepared == {}, "the failed statement's connection went back with its statements"


@pytest.mark.asyncio
async def test_a_statement_whose_plan_a_migration_invalidated_runs_again_planned_anew(
    stores: OpenStore, bare: Any, schema: str
) -> None:
    """The server refuses a prepared statement whose result type changed before running it; it runs once more.

    asyncpg does the same for the statements it caches (the refusal means
    nothing ran, so N3 is not at stake); without it, the first op after a
    migration would raise asyncpg's ``InvalidCachedStatementError`` at the caller.
    """
    store = await stores(ManualClock(START))
    queue = store.queue("held")
    job_id = await queue.enqueue("a")
    assert (await queue.get_job(job_id)) is not None
    await bare.execute(f"ALTER TABLE {quote_ident(schema)}.jobs ALTER COLUMN last_error TYPE varchar")
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.payload == "a"
