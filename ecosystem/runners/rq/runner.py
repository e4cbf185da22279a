"""The RQ runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is RQ's own ``rq worker`` command, as RQ's docs start it, which forks a work horse per job (the
harness's faults hit both: they share the worker's process group). Jobs are enqueued with the harness's ids as
RQ job ids and ``Retry(max=2)``, so a job RQ's cleanup finds abandoned is retried rather than failed. An idle
RQ worker blocks on the queue for its worker TTL − 15 s (405 s by default) between maintenance runs, so the
worker TTL is 20 s: the 5 s maintenance interval is then kept to within 5 s.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, exec_console_script, serve

WORKERS = "https://python-rq.org/docs/workers/"
RESULTS = "https://python-rq.org/docs/results/"
EXCEPTIONS = "https://python-rq.org/docs/exceptions/"
MAINTENANCE_S = 5
MONITORING_S = 1
WORKER_TTL_S = 20
JOB_TIMEOUT_S = 300
DESCRIPTION = {
    "library": "rq",
    "version": version("rq"),
    "settings": [
        {"name": "rq worker --maintenance-interval", "value": MAINTENANCE_S, "doc": WORKERS},
        {"name": "rq worker --job-monitoring-interval", "value": MONITORING_S, "doc": WORKERS},
        {"name": "rq worker --worker-ttl", "value": WORKER_TTL_S, "doc": WORKERS},
        {"name": "Queue.enqueue(job_timeout=...)", "value": JOB_TIMEOUT_S, "doc": RESULTS},
        {"name": "Queue.enqueue(retry=Retry(max=...))", "value": 2, "doc": EXCEPTIONS},
    ],
    "lease_s": 61.0,
    "recovery_window_s": 61.0 + MAINTENANCE_S + 10,
    "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut", "slow_handler"],
    "promises": [],
    "caveats": [
        {
            "outcome": "lost",
            "faults": ["kill9"],
            "quote": "killing a worker forcefully could potentially lead to damage. Just sayin'. If the worker gets "
            "killed while a job is running, it will eventually end up in FailedJobRegistry because a cleanup task "
            "will raise an AbandonedJobError.",
            "doc": RESULTS,
        }
    ],
}


def enqueue(jobs: list[Job]) -> None:
    from redis import Redis
    from rq import Queue, Retry

    queue = Queue(os.environ["ALKSTORE_FAULTS_QUEUE"], connection=Redis.from_url(os.environ["ALKSTORE_FAULTS_BROKER"]))
    for job in jobs:
        queue.enqueue(
            "tasks.run_job",
            job["id"],
            job["duration_s"],
            job["fail"],
            job_id=job["id"],
            job_timeout=JOB_TIMEOUT_S,
            retry=Retry(max=2),
        )


def worker() -> None:
    broker, queue = os.environ["ALKSTORE_FAULTS_BROKER"], os.environ["ALKSTORE_FAULTS_QUEUE"]
    name = f"{queue}-{os.environ['ALKSTORE_FAULTS_WORKER']}"
    options = ["--url", broker, "--name", name, "--path", ".", "--maintenance-interval", str(MAINTENANCE_S)]
    options += ["--job-monitoring-interval", str(MONITORING_S), "--worker-ttl", str(WORKER_TTL_S)]
    exec_console_script("rq", "worker", *options, queue)


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
