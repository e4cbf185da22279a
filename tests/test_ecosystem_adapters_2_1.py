"""The Python library adapters on contract 2.1: each declares what its library has, and maps it as its docs say.

pgqueuer declares ``unique_keys`` (its ``dedupe_key``); procrastinate declares ``unique_keys`` (its
``queueing_lock``) and ``transactional_enqueue`` (its ``connection`` option); neither declares ``release``, which
neither library has (docs/ecosystem.md). These tests pin the mapping on a real Postgres server, below the suite:
the holder's id is answered, the documented differences stay visible (pgqueuer's key is one across queues,
procrastinate's lock is freed by a fetch), and procrastinate's INSERT runs on the caller's connection and commits
nothing of its own. They skip, naming the install command, without the ``ecosystem`` extra or a server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import pytest_asyncio

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.surface import Store, TransactionalQueue, UniqueQueue
from alkstore_contract.types import Enqueued

INSTALL = "pip install -e '.[ecosystem]'"


def _adapter(library: str) -> Any:
    """The library's adapter, or a visible skip naming the install command."""
    pytest.importorskip(library, reason=f"{library} is not installed: {INSTALL}")
    module = pytest.importorskip(f"alkstore_{library}.adapter", reason=f"the {library} adapter needs: {INSTALL}")
    return module.adapter


@pytest_asyncio.fixture
async def opened(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, str, Store]]:
    """The library's adapter, a fresh location of it and a store open on it (closed and dropped after)."""
    adapter = _adapter(request.param)
    reason = await adapter.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    location = await adapter.create_location()
    store = await adapter.open_store(location)
    try:
        yield adapter, location, store
    finally:
        await adapter.drop_location(location)


def test_each_adapter_declares_only_what_its_library_has() -> None:
    pgqueuer = _adapter("pgqueuer").capabilities
    procrastinate = _adapter("procrastinate").capabilities
    assert Capability.UNIQUE_KEYS in pgqueuer
    assert Capability.UNIQUE_KEYS in procrastinate
    assert Capability.TRANSACTIONAL_ENQUEUE in procrastinate
    assert Capability.TRANSACTIONAL_ENQUEUE not in pgqueuer
    assert Capability.RELEASE not in pgqueuer
    assert Capability.RELEASE not in procrastinate


@pytest.mark.asyncio
@pytest.mark.parametrize("opened", ["pgqueuer", "procrastinate"], indirect=True)
async def test_a_held_key_answers_its_holder_and_a_finished_one_is_free(opened: tuple[Any, str, Store]) -> None:
    adapter, location, store = opened
    queue = cast(UniqueQueue, store.queue("reports"))
    first = await queue.enqueue_unique({"n": 1}, "report-42")
    again = await queue.enqueue_unique({"n": 2}, "report-42")
    assert (first.created, again) == (True, Enqueued(first.id, False))
    job = await queue.get_job(first.id)
    assert job is not None
    assert job.payload == {"n": 1}
    assert await adapter.count_stored_jobs(location) == 1
    handle = await queue.claim_one("w")
    assert handle is not None
    assert await handle.ack()
    assert (await queue.enqueue_unique({"n": 3}, "report-42")).created


@pytest.mark.asyncio
@pytest.mark.parametrize("opened", ["pgqueuer"], indirect=True)
async def test_pgqueuer_holds_one_key_across_queues(opened: tuple[Any, str, Store]) -> None:
    """pgqueuer's dedupe index is over the key alone: the matrix's K1 failure, pinned here."""
    store = opened[2]
    first = await cast(UniqueQueue, store.queue("a")).enqueue_unique({}, "k")
    assert await cast(UniqueQueue, store.queue("b")).enqueue_unique({}, "k") == Enqueued(first.id, False)


@pytest.mark.asyncio
@pytest.mark.parametrize("opened", ["procrastinate"], indirect=True)
async def test_procrastinate_frees_a_queueing_lock_when_its_job_is_fetched(opened: tuple[Any, str, Store]) -> None:
    """The queueing lock holds while the job waits (todo) only: the matrix's K1 failure, pinned here."""
    store = opened[2]
    queue = cast(UniqueQueue, store.queue("reports"))
    first = await queue.enqueue_unique({}, "k")
    assert await queue.claim_one("w") is not None
    second = await queue.enqueue_unique({}, "k")
    assert second.created
    assert second.id != first.id


@pytest.mark.asyncio
@pytest.mark.parametrize("opened", ["procrastinate"], indirect=True)
async def test_procrastinate_enqueues_in_the_callers_transaction(opened: tuple[Any, str, Store]) -> None:
    adapter, location, store = opened
    queue = cast(TransactionalQueue, store.queue("orders"))
    rolled = await adapter.begin_transaction(location)
    gone = await queue.enqueue_in(rolled.transaction, {"order": 1})
    assert await queue.get_job(gone) is None
    await rolled.rollback()
    assert await queue.get_job(gone) is None
    assert await adapter.count_stored_jobs(location) == 0
    kept = await adapter.begin_transaction(location)
    stored = await queue.enqueue_in(kept.transaction, {"order": 2})
    await kept.commit()
    job = await queue.get_job(stored)
    assert job is not None
    assert job.payload == {"order": 2}


@pytest.mark.asyncio
@pytest.mark.parametrize("opened", ["procrastinate"], indirect=True)
async def test_procrastinate_refuses_a_connection_that_would_commit_by_itself(opened: tuple[Any, str, Store]) -> None:
    import psycopg

    adapter, location, store = opened
    dsn, schema = adapter.location_of(location)
    connection = await psycopg.AsyncConnection.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
    queue = cast(TransactionalQueue, store.queue("orders"))
    try:
        for bad, rule in ((connection, "autocommit"), ("not a connection", "psycopg AsyncConnection")):
            with pytest.raises(InvalidArgument, match=rule):
                await queue.enqueue_in(bad, {"order": 3})
    finally:
        await connection.close()
    assert await adapter.count_stored_jobs(location) == 0
