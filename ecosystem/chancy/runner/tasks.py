"""chancy's side of its runner: the app, its queue, its jobs and the one job function, as a user writes them.

chancy enables Leadership, Recovery and Pruner by default with intervals of a minute or more and a worker
heartbeat timeout of 90 s (chancy/worker.py, chancy/plugins/*.py): a killed worker's job would wait minutes,
longer than a run. The runner keeps every plugin and shortens each interval in the same proportions (the
heartbeat timeout three heartbeat periods, as 90 s is of 30 s; the leadership timeout over twice its poll, as the
Leadership docstring asks), which ``describe``'s settings cite.

The job function runs in chancy's process executor and takes chancy's ``QueuedJob`` as a keyword-only argument
(chancy passes it to a parameter annotated with that class), for the attempt number. A job that outlives its
``Limit.Type.TIME`` is interrupted by the executor with ``TimeoutError``: the handler then writes ``cancelled``
(by the library) instead of ``end``. No ``from __future__ import annotations`` here: chancy reads the annotation
as a class, not as a string.
"""

import os

from chancy import Chancy, Job, Limit, Queue, QueuedJob
from chancy.plugins.leadership import Leadership
from chancy.plugins.pruner import Pruner
from chancy.plugins.recovery import Recovery

from alkstore_faults.handler import perform, record_cancelled

HEARTBEAT_POLL_S = 5
HEARTBEAT_TIMEOUT_S = 15
LEADERSHIP_POLL_S = 2
LEADERSHIP_TIMEOUT_S = 5
RECOVERY_POLL_S = 2
PRUNER_POLL_S = 60
TIME_LIMIT_S = 30
MAX_ATTEMPTS = 3
CONCURRENCY = 1


def broker() -> str:
    return os.environ.get("ALKSTORE_FAULTS_BROKER") or "postgresql://"


def queue_name() -> str:
    return os.environ.get("ALKSTORE_FAULTS_QUEUE") or "default"


def application() -> Chancy:
    return Chancy(
        broker(),
        plugins=[
            Leadership(poll_interval=LEADERSHIP_POLL_S, timeout=LEADERSHIP_TIMEOUT_S),
            Recovery(poll_interval=RECOVERY_POLL_S),
            Pruner(poll_interval=PRUNER_POLL_S),
        ],
    )


def queue() -> Queue:
    return Queue(name=queue_name(), concurrency=CONCURRENCY, eager_polling=True)


def job_of(job_id: str, duration_s: float, fail: bool) -> Job:
    return Job(
        func="tasks.run_job",
        queue=queue_name(),
        kwargs={"job": job_id, "duration_s": duration_s, "fail": fail},
        max_attempts=MAX_ATTEMPTS,
        limits=[Limit(Limit.Type.TIME, TIME_LIMIT_S)],
    )


def run_job(job: str, duration_s: float, fail: bool, *, context: QueuedJob) -> str:
    attempt = context.attempts + 1  # chancy counts an attempt when it ends
    try:
        return perform(job, duration_s, fail, attempt)
    except TimeoutError:
        record_cancelled(job, attempt, "TimeoutError")
        raise
