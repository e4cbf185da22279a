"""The Celery app ``benchmarks/worker.py`` runs with ``celery -A bench.worker_celery worker`` (Redis or RabbitMQ).

The broker and the prefetch multiplier come from the environment the parent
sets: ``worker.py``'s settings table says which value each point uses and the
Celery documentation it follows.
"""

from __future__ import annotations

import os
import time

from celery import Celery

from bench.worker_marks import SLEEP_S, mark, sleeps, started

BROKER_ENV = "BENCH_WORKER_BROKER"
PREFETCH_ENV = "BENCH_CELERY_PREFETCH"

app = Celery("bench", broker=os.environ.get(BROKER_ENV, "redis://127.0.0.1:6379/0"))
app.conf.task_ignore_result = True
app.conf.worker_hijack_root_logger = False
app.conf.worker_enable_remote_control = False  # no pidbox keys or queues left on a shared broker
app.conf.worker_prefetch_multiplier = int(os.environ.get(PREFETCH_ENV, "4"))
SLEEPS = sleeps()


@app.task(name="bench")
def bench(payload: object) -> None:
    line = started(payload)
    if SLEEPS:
        time.sleep(SLEEP_S)  # synchronous: the gevent pool patches it to yield, prefork gives it a process
    mark(line)
