"""A Postgres store's statement timeout (contract N1), kept by one timer per store (``alkstore_postgres.deadlines``).

The store's pool has no ``command_timeout``: ``StatementDeadlines`` notes each
statement and cancels the ones that ran for their ``op_timeout_s``. These
tests pin what asyncpg's own timer promised and this one must too: a
statement gives up after between 0.9 and 1 times ``op_timeout_s`` with
``StoreUnavailable`` (N1), the server's statement is cancelled, the same
store serves the next op (N2), a statement within its timeout is never cut,
each statement is timed from its own start, and a cancellation that comes
from elsewhere stays a cancellation. If one fails, check
``StatementDeadlines`` (``_tick``, ``failed``) and ``HeldConnections.fetch``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from alkstore_postgres import ServerConnectionError
from alkstore_postgres.connection import application_name
from alkstore_postgres.deadlines import TICKS

from alkstore_contract import ManualClock, StoreUnavailable
from tests.polling import until
from tests.test_postgres_engine import START, OpenStore, bare, dsn, schema, stores

__all__ = ["bare", "dsn", "schema", "stores"]

OP_TIMEOUT_S = 0.5
SLACK_S = 1.0
"""How late a loaded test machine may run the tick and the cancel: far below the 30 s the statement asks for."""


async def active_sleeps(bare: Any, schema: str) -> int:
    """How many of the store's backends are running a ``pg_sleep`` right now, as the server sees them."""
    await bare.execute("SELECT pg_stat_clear_snapshot()")
    count: int = await bare.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'"
        " AND query LIKE 'SELECT pg_sleep%'",
        application_name(schema),
    )
    return count


@pytest.mark.asyncio
async def test_n1_a_statement_past_its_timeout_gives_up_within_the_bound(
    stores: OpenStore, bare: Any, schema: str
) -> None:
    """N1: StoreUnavailable (a TimeoutError underneath) after 0.9 to 1 times op_timeout_s; the server's query ends."""
    store = await stores(ManualClock(START), op_timeout_s=OP_TIMEOUT_S)
    queue = store.queue("deadlines")
    await queue.enqueue("before")
    started = time.monotonic()
    with pytest.raises(ServerConnectionError) as raised:
        await store.driver.fetch("sleep", "SELECT pg_sleep(30)")
    took = time.monotonic() - started
    assert isinstance(raised.value, StoreUnavailable)
    assert isinstance(raised.value.__cause__, TimeoutError)
    assert OP_TIMEOUT_S * (1 - 1 / TICKS) <= took < OP_TIMEOUT_S + SLACK_S, f"gave up after {took:.3f} s"

    async def ended() -> bool:  # the server ends the statement a moment after it is cancelled
        return await active_sleeps(bare, schema) == 0

    await until(ended, "the server to end the statement the store gave up on")
    assert await queue.enqueue("after") is not None, "N2: the same store serves the next op"


@pytest.mark.asyncio
async def test_n1_statements_within_the_timeout_are_never_cut(stores: OpenStore) -> None:
    """Statements of 0.6 of the timeout, one after another across many ticks, all return."""
    store = await stores(ManualClock(START), op_timeout_s=OP_TIMEOUT_S)
    for _ in range(4):
        await asyncio.gather(*(store.driver.fetch("sleep", "SELECT pg_sleep(0.3)") for _ in range(3)))


@pytest.mark.asyncio
async def test_n1_each_statement_is_timed_from_its_own_start(stores: OpenStore) -> None:
    """A statement that started later is not cut when an earlier one is: the second sleep ends in time."""
    store = await stores(ManualClock(START), op_timeout_s=OP_TIMEOUT_S)

    async def later() -> list[Any]:
        await asyncio.sleep(0.3)
        return await store.driver.fetch("sleep", "SELECT pg_sleep(0.35)")

    outcomes = await asyncio.gather(store.driver.fetch("sleep", "SELECT pg_sleep(30)"), later(), return_exceptions=True)
    assert isinstance(outcomes[0], ServerConnectionError)
    assert not isinstance(outcomes[1], BaseException), f"the later statement was cut: {outcomes[1]!r}"


@pytest.mark.asyncio
async def test_a_cancellation_from_elsewhere_stays_a_cancellation(stores: OpenStore) -> None:
    """The caller's own cancel (a timeout of its own, a shutdown) is not turned into StoreUnavailable."""
    store = await stores(ManualClock(START), op_timeout_s=OP_TIMEOUT_S)
    task = asyncio.create_task(store.driver.fetch("sleep", "SELECT pg_sleep(30)"))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.queue("deadlines").enqueue("after") is not None
