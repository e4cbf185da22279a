"""The Python peers on the same Postgres server doing the same work: pgqueuer and procrastinate.

The same jobs (``workload.payload``), enqueued in batches of ``BATCH`` by 1 or
4 workers, and a backlog of them consumed by 4 workers whose handler decodes
the payload and returns; a consumed job is removed, as an alkstore ack removes
it. Each peer is set up the way its documentation shows, in a fresh schema of
its own, with nothing tuned but what "the same work" needs:

- pgqueuer: one ``AsyncpgDriver`` connection and ``Queries`` per enqueuing
  worker (``Queries.enqueue`` with lists is one statement per batch); a worker
  is a ``QueueManager`` on its own connection, run in ``drain`` mode, which
  returns once the queue is empty. Its dequeue batch size is its main knob,
  so the consume is run at each of ``PGQUEUER_BATCH_SIZES`` and reported at
  its best.
- procrastinate: an ``App`` on its ``PsycopgConnector`` pool;
  ``Task.batch_defer_async`` is one statement per batch; one worker with
  ``concurrency=4`` (its idiom for four workers), ``wait=False`` so it returns
  once the queue is empty, and ``delete_jobs="always"`` so a finished job is
  removed (by default procrastinate keeps finished jobs in the table).

Latency per op is recorded for the enqueue batches; a peer's worker loop is
its own, so consume latencies are not comparable and are not recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from alkstore_postgres.location import quote_ident

from bench.checkpoint import checkpoint
from bench.counting import Tally
from bench.model import Counts, Sample
from bench.workload import Payload, batches

PGQUEUER_BATCH_SIZES = (10, 100)
ENTRYPOINT = "bench"

PeerRun = Callable[[str, int, int, "Tally | None"], Awaitable[tuple[Sample, Counts | None]]]
"""``(dsn, workers, jobs, tally)`` → one timed run (and, with a tally, its counts)."""


async def _drop_schema(dsn: str, schema: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
    finally:
        await conn.close()


async def _rows_in(dsn: str, schema: str, table: str) -> int:
    """How many rows a peer's jobs table holds: what a run left behind, checked after it."""
    conn = await asyncpg.connect(dsn)
    try:
        count: int = await conn.fetchval(f"SELECT count(*) FROM {quote_ident(schema)}.{table}")
    finally:
        await conn.close()
    return count


def _timed(tally: Tally | None) -> float:
    if tally is not None:
        tally.start()
    return time.perf_counter()


def _finish(tally: Tally | None, jobs: int) -> Counts | None:
    return None if tally is None else tally.stop(jobs)


# --- pgqueuer ---------------------------------------------------------------------------------


class _Pgqueuer:
    """A pgqueuer installation in a fresh schema (pgqueuer reads its schema from the environment)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.schema = f"alk_pgq_{uuid.uuid4().hex[:12]}"

    async def __aenter__(self) -> _Pgqueuer:
        from pgqueuer.db import AsyncpgDriver
        from pgqueuer.domain.settings import db_settings
        from pgqueuer.queries import Queries

        os.environ["PGQUEUER_SCHEMA"] = self.schema
        db_settings.cache_clear()
        conn = await asyncpg.connect(self.dsn)
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()
        return self

    async def __aexit__(self, *exc: object) -> None:
        from pgqueuer.domain.settings import db_settings

        await _drop_schema(self.dsn, self.schema)
        os.environ.pop("PGQUEUER_SCHEMA", None)
        db_settings.cache_clear()

    async def queries(self) -> tuple[Any, Any]:
        """A connection and the ``Queries`` on it."""
        from pgqueuer.db import AsyncpgDriver
        from pgqueuer.queries import Queries

        conn = await asyncpg.connect(self.dsn)
        return conn, Queries(AsyncpgDriver(conn))

    async def enqueue_batch(self, queries: Any, batch: list[Payload]) -> None:
        encoded = [json.dumps(item).encode() for item in batch]
        await queries.enqueue([ENTRYPOINT] * len(batch), encoded, [0] * len(batch))

    async def stored(self) -> int:
        return await _rows_in(self.dsn, self.schema, "pgqueuer")


async def pgqueuer_enqueue_many(dsn: str, workers: int, jobs: int, tally: Tally | None) -> tuple[Sample, Counts | None]:
    async with _Pgqueuer(dsn) as pgq:
        await checkpoint(dsn)  # before the backlog and the clock (bench.checkpoint)
        opened = [await pgq.queries() for _ in range(workers)]
        payloads = batches(jobs)
        latencies: list[float] = []

        async def worker(index: int) -> None:
            for batch in payloads[index::workers]:
                started = time.perf_counter_ns()
                await pgq.enqueue_batch(opened[index][1], batch)
                latencies.append((time.perf_counter_ns() - started) / 1000)

        started = _timed(tally)
        await asyncio.gather(*(worker(index) for index in range(workers)))
        seconds = time.perf_counter() - started
        counts = _finish(tally, jobs)
        for conn, _ in opened:
            await conn.close()
        if (stored := await pgq.stored()) != jobs:
            raise RuntimeError(f"pgqueuer stored {stored} of {jobs} jobs")
    return Sample(jobs=jobs, seconds=seconds, latencies_us=tuple(latencies)), counts


def pgqueuer_consume(batch_size: int) -> PeerRun:
    """Consume a backlog with ``workers`` QueueManagers dequeuing ``batch_size`` jobs at a time."""

    async def run(dsn: str, workers: int, jobs: int, tally: Tally | None) -> tuple[Sample, Counts | None]:
        from pgqueuer.models import Job
        from pgqueuer.qm import QueueManager
        from pgqueuer.types import QueueExecutionMode

        async with _Pgqueuer(dsn) as pgq:
            await checkpoint(dsn)  # before the backlog and the clock (bench.checkpoint)
            conn, queries = await pgq.queries()
            for batch in batches(jobs):
                await pgq.enqueue_batch(queries, batch)
            await conn.close()
            handled = 0
            managers: list[Any] = []
            conns: list[Any] = []
            for _ in range(workers):
                conn, queries = await pgq.queries()
                manager = QueueManager(queries)
                conns.append(conn)
                managers.append(manager)

                @manager.entrypoint(ENTRYPOINT)
                async def handle(job: Job) -> None:
                    nonlocal handled
                    assert job.payload is not None
                    json.loads(job.payload)
                    handled += 1

            started = _timed(tally)
            await asyncio.gather(
                *(manager.run(batch_size=batch_size, mode=QueueExecutionMode.drain) for manager in managers)
            )
            seconds = time.perf_counter() - started
            counts = _finish(tally, jobs)
            for conn in conns:
                await conn.close()
            left = await pgq.stored()
            if handled != jobs or left:
                raise RuntimeError(f"pgqueuer handled {handled} of {jobs} jobs and left {left} in its table")
        return Sample(jobs=jobs, seconds=seconds, latencies_us=()), counts

    return run


# --- procrastinate ----------------------------------------------------------------------------


class _Procrastinate:
    """A procrastinate ``App`` whose pool's connections use a fresh schema (``search_path``)."""

    def __init__(self, dsn: str, workers: int) -> None:
        from procrastinate import App, PsycopgConnector

        self.dsn = dsn
        self.schema = f"alk_proc_{uuid.uuid4().hex[:12]}"
        self.handled = 0
        connector = PsycopgConnector(
            conninfo=dsn,
            kwargs={"options": f"-c search_path={self.schema}"},
            min_size=1,
            max_size=max(4, workers + 2),
        )
        self.app = App(connector=connector)

        @self.app.task(name=ENTRYPOINT, queue=ENTRYPOINT)
        async def handle(**kwargs: object) -> None:
            self.handled += 1

        self.task: Any = handle

    async def __aenter__(self) -> _Procrastinate:
        conn = await asyncpg.connect(self.dsn)
        try:
            await conn.execute(f"CREATE SCHEMA {quote_ident(self.schema)}")
        finally:
            await conn.close()
        await self.app.open_async()
        await self.app.schema_manager.apply_schema_async()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.app.close_async()
        await _drop_schema(self.dsn, self.schema)

    async def stored(self) -> int:
        return await _rows_in(self.dsn, self.schema, "procrastinate_jobs")


async def procrastinate_enqueue_many(
    dsn: str, workers: int, jobs: int, tally: Tally | None
) -> tuple[Sample, Counts | None]:
    async with _Procrastinate(dsn, workers) as proc:
        await checkpoint(dsn)  # before the backlog and the clock (bench.checkpoint)
        payloads = batches(jobs)
        latencies: list[float] = []

        async def worker(index: int) -> None:
            for batch in payloads[index::workers]:
                started = time.perf_counter_ns()
                await proc.task.batch_defer_async(*batch)
                latencies.append((time.perf_counter_ns() - started) / 1000)

        started = _timed(tally)
        await asyncio.gather(*(worker(index) for index in range(workers)))
        seconds = time.perf_counter() - started
        counts = _finish(tally, jobs)
        if (stored := await proc.stored()) != jobs:
            raise RuntimeError(f"procrastinate stored {stored} of {jobs} jobs")
    return Sample(jobs=jobs, seconds=seconds, latencies_us=tuple(latencies)), counts


async def procrastinate_consume(dsn: str, workers: int, jobs: int, tally: Tally | None) -> tuple[Sample, Counts | None]:
    async with _Procrastinate(dsn, workers) as proc:
        await checkpoint(dsn)  # before the backlog and the clock (bench.checkpoint)
        for batch in batches(jobs):
            await proc.task.batch_defer_async(*batch)
        started = _timed(tally)
        await proc.app.run_worker_async(
            queues=[ENTRYPOINT],
            concurrency=workers,
            wait=False,
            delete_jobs="always",
            install_signal_handlers=False,
        )
        seconds = time.perf_counter() - started
        counts = _finish(tally, jobs)
        left = await proc.stored()
        if proc.handled != jobs or left:
            raise RuntimeError(f"procrastinate handled {proc.handled} of {jobs} jobs and left {left} in its table")
    return Sample(jobs=jobs, seconds=seconds, latencies_us=()), counts


def installed() -> dict[str, str]:
    """The peers importable here, with their versions."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str] = {}
    for name in ("pgqueuer", "procrastinate"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found
