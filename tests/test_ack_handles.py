"""``KitQueue.ack_handles``, ``heartbeat_handles``: many claims acked or renewed at once, each under its own fence.

Postgres takes them in one statement (its driver's ``ack_claims``); SQLite
and mem through one ``ack`` per handle, run concurrently (SQLite shares one
transaction among them). Whichever way: a stale claim is refused while the
live ones complete (H1, H5), every handle is spent after (H4), a step that
raised ``StoreUnavailable`` spends none (N6), bad input is refused naming it
and acks nothing. Postgres skips when no server answers (fails under CI).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from alkstore_contract import HandleSpent, InvalidArgument, ManualClock, QueueOpts, StoreUnavailable
from alkstore_contract.kit import KitQueue
from alkstore_contract.surface import JobHandle, Store

OPTS = QueueOpts(visibility_timeout_s=10)


@pytest_asyncio.fixture(params=["mem", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Store, ManualClock]]:
    clock = ManualClock()
    if request.param == "mem":
        import alkstore_mem

        opened: Store = await alkstore_mem.open_store(f"ack-handles-{id(request)}", clock=clock)
    elif request.param == "sqlite":
        import alkstore_sqlite

        opened = await alkstore_sqlite.open_store(tmp_path / "jobs.sqlite3", clock=clock)
    else:
        import alkstore_postgres
        import asyncpg
        from alkstore_postgres.location import new_schema_name, quote_ident

        from tests.test_worker_runtime import pg_dsn

        dsn = await pg_dsn()
        schema = new_schema_name()
        opened = await alkstore_postgres.open_store(dsn, schema=schema, clock=clock)
    try:
        yield opened, clock
    finally:
        await opened.close()
        if request.param == "postgres":
            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
            finally:
                await connection.close()


async def _claimed(queue: Any, n: int) -> list[JobHandle]:
    await queue.enqueue_many(list(range(n)))
    handles: list[JobHandle] = await queue.claim_batch("w", n)
    assert len(handles) == n
    return handles


async def _lapsed_and_taken(queue: KitQueue[Any], clock: ManualClock) -> tuple[JobHandle, JobHandle]:
    """A claim whose lease lapsed, and the claim that took its job since (H5: the first is stale)."""
    stale = (await _claimed(queue, 1))[0]
    clock.advance(11)
    taken = await queue.claim_one("other")
    assert taken is not None
    assert taken.job.id == stale.job.id
    return stale, taken


@pytest.mark.asyncio
async def test_a_stale_claim_is_refused_while_the_live_ones_complete(store: tuple[Store, ManualClock]) -> None:
    opened, clock = store
    queue = opened.queue("acks", OPTS)
    assert isinstance(queue, KitQueue)
    stale, taken = await _lapsed_and_taken(queue, clock)
    live = await _claimed(queue, 3)
    assert await queue.ack_handles([live[0], stale, live[1], live[2]]) == [True, False, True, True]
    assert [await queue.get_job(handle.job.id) for handle in live] == [None, None, None]
    assert await queue.get_job(stale.job.id) is not None, "the new holder's job is untouched"
    with pytest.raises(HandleSpent):
        await live[0].ack()
    with pytest.raises(HandleSpent):
        await queue.ack_handles([stale])
    assert await taken.ack() is True
    assert await queue.ack_handles([]) == []


@pytest.mark.asyncio
async def test_bad_input_is_refused_naming_it_and_acks_nothing(store: tuple[Store, ManualClock]) -> None:
    opened, _ = store
    queue = opened.queue("acks", OPTS)
    other = opened.queue("elsewhere", OPTS)
    assert isinstance(queue, KitQueue)
    mine = await _claimed(queue, 1)
    theirs = await _claimed(other, 1)
    with pytest.raises(InvalidArgument, match=r"handles: .* is not a claim of queue 'acks' of this store"):
        await queue.ack_handles([mine[0], theirs[0]])
    with pytest.raises(InvalidArgument, match=r"handles: job .* is listed twice"):
        await queue.ack_handles([mine[0], mine[0]])
    with pytest.raises(InvalidArgument, match=r"handles=.*: must be a list or tuple of job handles"):
        await queue.ack_handles(mine[0])  # type: ignore[arg-type]
    assert await queue.get_job(mine[0].job.id) is not None
    assert await mine[0].ack() is True, "refused input spent no handle"


@pytest.mark.asyncio
async def test_a_step_that_raised_store_unavailable_spends_no_handle(
    store: tuple[Store, ManualClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened, _ = store
    queue = opened.queue("acks", OPTS)
    assert isinstance(queue, KitQueue)
    handles = await _claimed(queue, 2)
    driver = queue._driver
    name = "ack_claims" if hasattr(driver, "ack_claims") else "ack"

    async def unreachable(*args: object) -> object:
        raise StoreUnavailable("the server went away")

    with monkeypatch.context() as patched:
        patched.setattr(driver, name, unreachable)
        with pytest.raises(StoreUnavailable):
            await queue.ack_handles(handles)
    assert await queue.ack_handles(handles) == [True, True], "N6: the same handles settle the jobs afterwards"


@pytest.mark.asyncio
async def test_the_worker_sends_acks_that_wait_together_in_one_call() -> None:
    """``alkstore_worker.batches``: every run in flight waiting → sent at once; a lone ack → after the window."""
    import asyncio

    from alkstore_worker.batches import Batch

    calls: list[int] = []
    in_flight = 3

    async def ack_handles(handles: Sequence[JobHandle]) -> list[bool]:
        calls.append(len(handles))
        return [True] * len(handles)

    batch = Batch(ack_handles, 0.05, lambda: in_flight)
    handles: list[Any] = [object(), object(), object()]
    assert await asyncio.gather(*(batch.send(handle) for handle in handles)) == [True, True, True]
    assert calls == [3]
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await batch.send(handles[0]) is True
    assert calls == [3, 1]
    assert loop.time() - started >= 0.04, "a lone ack waits the window for others"
    await batch.drain()


@pytest.mark.asyncio
async def test_heartbeat_handles_renews_each_live_claim_and_refuses_a_stale_one(
    store: tuple[Store, ManualClock],
) -> None:
    opened, clock = store
    queue = opened.queue("beats", OPTS)
    assert isinstance(queue, KitQueue)
    stale, taken = await _lapsed_and_taken(queue, clock)
    live = await _claimed(queue, 2)
    now = clock.advance(4)
    assert await queue.heartbeat_handles([live[0], stale, live[1]]) == [True, False, True]
    for handle in live:
        job = await queue.get_job(handle.job.id)
        assert job is not None
        assert job.lease_expires_at == now + timedelta(seconds=OPTS.visibility_timeout_s), "H3: now + the stamp"
    held = await queue.get_job(taken.job.id)
    assert held is not None
    assert held.lease_expires_at == taken.job.lease_expires_at, "the new holder's lease is untouched"
    assert await live[0].ack() is True
    with pytest.raises(HandleSpent):
        await queue.heartbeat_handles([live[0]])
    assert await queue.heartbeat_handles([]) == []


@pytest.mark.asyncio
async def test_a_request_whose_run_stopped_waiting_is_not_sent() -> None:
    """A heartbeat task cancelled while its beat waits (the handler finished and its ack spent the handle)."""
    import asyncio

    from alkstore_worker.batches import Batch

    sent: list[Sequence[JobHandle]] = []

    async def heartbeat_handles(handles: Sequence[JobHandle]) -> list[bool]:
        sent.append(handles)
        return [True] * len(handles)

    batch = Batch(heartbeat_handles, 0.05, lambda: 3)
    finished: Any = object()
    running: Any = object()
    gone = asyncio.ensure_future(batch.send(finished))
    beat = asyncio.ensure_future(batch.send(running))
    await asyncio.sleep(0)
    gone.cancel()
    assert await beat is True
    assert sent == [[running]]
