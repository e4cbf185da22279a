"""The app the worker tests run in real ``alkstore worker`` processes (``tests.worker_app:app``).

Configured by the environment the test gives the process: where the store is
(``ALKSTORE_WORKER_TEST_STORE``: ``sqlite:PATH`` or ``postgres:SCHEMA``, the
server from ``ALKSTORE_PG_DSN`` or the default DSN), the lease, and the file
each handler appends one JSON line to when it starts and when it finishes
(``ALKSTORE_WORKER_TEST_LOG``), so a test sees which process ran which
attempt of which job without trusting the worker's own log.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

from alkstore_postgres import PostgresSource
from alkstore_sqlite import SqliteSource

from alkstore_contract import QueueOpts
from alkstore_worker import App, JobContext, WorkerSource

STORE_ENV = "ALKSTORE_WORKER_TEST_STORE"
LOG_ENV = "ALKSTORE_WORKER_TEST_LOG"
LEASE_ENV = "ALKSTORE_WORKER_TEST_LEASE"
QUEUE = "work"
STALL_TIMEOUT_S = 0.3


def source_from(spec: str) -> WorkerSource:
    """``sqlite:PATH`` or ``postgres:SCHEMA`` as a store source."""
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        return SqliteSource(where)
    if kind == "postgres":
        from alkstore_postgres import DEFAULT_DSN

        return PostgresSource(os.environ.get("ALKSTORE_PG_DSN", DEFAULT_DSN), where)
    raise ValueError(f"{STORE_ENV}={spec!r}: must be sqlite:PATH or postgres:SCHEMA")


def record(event: str, context: JobContext, **fields: object) -> None:
    """One line of the handlers' own log: what ran, in which process, at which attempt."""
    line = json.dumps({"event": event, "job": context.job.id, "attempt": context.attempt, "pid": os.getpid(), **fields})
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(line + "\n")


app = App(source_from(os.environ.get(STORE_ENV, "sqlite:worker-test.sqlite3")))
OPTS = QueueOpts(visibility_timeout_s=float(os.environ.get(LEASE_ENV, "2")), backoff_base_s=0.05)


@app.task(queue=QUEUE, queue_opts=OPTS)
async def long_job(payload: dict[str, float], context: JobContext) -> None:
    """Sleeps ``payload["seconds"]``: the job a stop or a kill lands in the middle of."""
    record("started", context)
    await asyncio.sleep(payload["seconds"])
    record("finished", context)


@app.task(queue=QUEUE, queue_opts=OPTS, timeout=STALL_TIMEOUT_S)
async def stall_once(payload: object, context: JobContext) -> None:
    """Stalls far past its timeout on the first attempt, finishes on the next."""
    record("started", context)
    if context.attempt == 1:
        await asyncio.sleep(60)
    record("finished", context)


@app.task(queue=QUEUE, queue_opts=OPTS)
async def quick(payload: object, context: JobContext) -> None:
    """Finishes at once."""
    record("finished", context)


SIDE_EFFECTS_LEASE_S = 1.0


@app.task(queue=QUEUE, queue_opts=QueueOpts(visibility_timeout_s=SIDE_EFFECTS_LEASE_S, backoff_base_s=0.05))
async def side_effects(payload: dict[str, float], context: JobContext) -> None:
    """On its first attempt, a side effect (a line with the monotonic clock) every ``payload["every"]`` seconds,
    ``payload["steps"]`` times, without ever asking ``context.still_holding()``: what a lost lease must stop."""
    if context.attempt == 1:
        for step in range(int(payload["steps"])):
            record("side_effect", context, step=step, mono=time.monotonic())
            await asyncio.sleep(payload["every"])
    record("finished", context)


OUTAGE_LEASE_S = 15.0
"""The lease of ``outage_job``: longer than the database outage the test causes, so no lease lapses in it."""


@app.task(queue=QUEUE, queue_opts=QueueOpts(visibility_timeout_s=OUTAGE_LEASE_S, backoff_base_s=0.05))
async def outage_job(payload: dict[str, float], context: JobContext) -> None:
    """Sleeps ``payload["seconds"]``, then records that it finished: a completion a second run would repeat."""
    await asyncio.sleep(payload["seconds"])
    record("finished", context)
