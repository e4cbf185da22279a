"""Celery's side of the Celery runners: the app and the one task, with the settings Celery's docs give for
jobs that must survive a worker's death (``acks_late``, ``task_reject_on_worker_lost``), one job at a time.

Shared by both transports: the broker URL decides (``redis://`` or ``amqp://``). On Redis the visibility
timeout is 10 s (default one hour), the time after which an unacknowledged job is given to another worker, and
kombu's sweep for such jobs runs every second (by default every 10 × 10 s). On RabbitMQ the connection's
heartbeat is 5 s (default 120 s): a silent worker's connection, and with it its unacknowledged job, is dropped
after two missed heartbeats.

On Redis the app also keeps its results in the same Redis (``result_backend``, as Celery's Redis page
configures it) and reports a task ``STARTED`` (``task_track_started``): that is what the runner's ``inspect``
reads through ``AsyncResult``. Celery's RabbitMQ setup documents no result backend, so there is none.
"""

from __future__ import annotations

import os
import time
from typing import Any

from celery import Celery
from celery.signals import before_task_publish

from alkstore_faults.handler import perform, perform_tick

VISIBILITY_TIMEOUT_S = 10

BROKER = os.environ.get("ALKSTORE_FAULTS_BROKER") or "memory://"

app = Celery("alkstore_faults", broker=BROKER, backend=BROKER if BROKER.startswith("redis://") else None)
app.conf.update(
    task_track_started=True,
    task_default_queue=os.environ.get("ALKSTORE_FAULTS_QUEUE", "celery"),
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_transport_options={
        "visibility_timeout": VISIBILITY_TIMEOUT_S,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    },
    broker_connection_retry_on_startup=True,
    broker_heartbeat=5,
)


@app.task(bind=True)
def run_job(self: Any, job: str, duration_s: float, fail: bool) -> str:
    return perform(job, duration_s, fail, self.request.retries + 1)


# The schedule workload: one beat process (celery -A tasks beat), a tick every second, as Celery's periodic-tasks
# guide configures beat_schedule. Beat gives a task no scheduled time, so the runner stamps, in the beat process,
# the time beat sends each tick's message (before_task_publish): a redelivered message keeps its stamp.
app.conf.beat_schedule = {"tick": {"task": "tasks.tick", "schedule": 1.0}}


@before_task_publish.connect
def stamp_tick(sender: str | None = None, body: Any = None, **_: Any) -> None:
    if sender == "tasks.tick" and isinstance(body, tuple | list) and isinstance(body[1], dict):
        body[1]["tick"] = time.time()


@app.task(bind=True, name="tasks.tick")
def tick(self: Any, tick: float | None = None) -> None:
    """``tick`` is optional only for Celery's argument check, made before ``stamp_tick`` sets it."""
    if tick is None:
        raise ValueError("a tick's message carries no stamp: it was not sent by beat through stamp_tick")
    perform_tick(tick, self.request.retries + 1, self.request.id)
