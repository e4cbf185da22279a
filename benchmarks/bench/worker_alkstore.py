"""The alkstore app ``benchmarks/worker.py`` runs with ``alkstore worker bench.worker_alkstore:app``."""

from __future__ import annotations

import asyncio
import os

from alkstore_postgres import PostgresSource
from alkstore_sqlite import SqliteSource

from alkstore_worker import App, WorkerSource
from bench.worker_marks import SLEEP_S, mark, sleeps, started

QUEUE = "bench"


def _source() -> WorkerSource:
    if "BENCH_WORKER_SQLITE" in os.environ:
        return SqliteSource(os.environ["BENCH_WORKER_SQLITE"])
    return PostgresSource(os.environ.get("BENCH_WORKER_DSN", ""), os.environ.get("BENCH_WORKER_SCHEMA", "bench"))


app = App(_source())
SLEEPS = sleeps()


@app.task(name="bench", queue=QUEUE)
async def bench(payload: object) -> None:
    line = started(payload)
    if SLEEPS:
        await asyncio.sleep(SLEEP_S)
    mark(line)
