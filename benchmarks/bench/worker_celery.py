"""The Celery app ``benchmarks/worker.py`` runs with ``celery -A bench.worker_celery worker`` (Redis broker)."""

from __future__ import annotations

import os
import time

from celery import Celery

from bench.worker_marks import SLEEP_S, mark, sleeps, started

app = Celery("bench", broker=os.environ.get("BENCH_WORKER_REDIS", "redis://127.0.0.1:6379/0"))
app.conf.task_ignore_result = True
app.conf.worker_hijack_root_logger = False
app.conf.worker_enable_remote_control = False  # no pidbox keys left on a shared Redis
SLEEPS = sleeps()


@app.task(name="bench")
def bench(payload: object) -> None:
    line = started(payload)
    if SLEEPS:
        time.sleep(SLEEP_S)  # a Celery task is synchronous: its pool gives it a process
    mark(line)
