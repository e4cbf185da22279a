"""The RQ runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is RQ's own ``rq worker`` command, as RQ's docs start it, which forks a work horse per job (the
harness's faults hit both: they share the worker's process group). Jobs are enqueued with the harness's ids as
RQ job ids and ``Retry(max=2)``, so a job RQ's cleanup finds abandoned is retried rather than failed. An idle
RQ worker blocks on the queue for its worker TTL − 15 s (405 s by default) between maintenance runs, so the
worker TTL is 20 s: the 5 s maintenance interval is then kept to within 5 s.

A running job's hold is its entry in the queue's ``StartedJobRegistry``, renewed by the worker's heartbeat
every job-monitoring interval for that interval + 60 s (``get_heartbeat_ttl`` in rq/worker/base.py); once it
lapses, the next maintenance run's cleanup raises ``AbandonedJobError`` for the job and, with retries left,
requeues it (``StartedJobRegistry.cleanup``), or else moves it to the ``FailedJobRegistry`` as RQ's docs say.
``inspect`` reads each job with ``Job.fetch`` (status, latest result, worker) and the registries' own scores.
RQ keeps no attempt count: ``attempts`` is the retries RQ has used (``Retry(max=2)`` less its stored
``retries_left``) plus the run it records, so a job two cleanups both retried reads 3, and a run a stale worker
saved over the retry reads 1.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from typing import cast

from alkstore_ecosystem_kit.runner_description import caveat, every_fault

from alkstore_faults.runner_cli import Job, State, exec_console_script, serve

WORKERS = "https://python-rq.org/docs/workers/"
RESULTS = "https://python-rq.org/docs/results/"
EXCEPTIONS = "https://python-rq.org/docs/exceptions/"
REGISTRIES = "https://python-rq.org/docs/job_registries/"
MAINTENANCE_S = 5
MONITORING_S = 1
WORKER_TTL_S = 20
JOB_TIMEOUT_S = 300
RETRIES = 2
HOLD_S = MONITORING_S + 60
"""A started job's registry entry lasts the monitoring interval + 60 s past each heartbeat (rq/worker/base.py)."""
ABANDONED = (
    "If the worker gets killed while a job is running, it will eventually end up in FailedJobRegistry because a "
    "cleanup task will raise an AbandonedJobError."
)
DESCRIPTION = {
    "library": "rq",
    "version": version("rq"),
    "settings": [
        {"name": "rq worker --maintenance-interval", "value": MAINTENANCE_S, "doc": WORKERS},
        {"name": "rq worker --job-monitoring-interval", "value": MONITORING_S, "doc": WORKERS},
        {"name": "rq worker --worker-ttl", "value": WORKER_TTL_S, "doc": WORKERS},
        {"name": "Queue.enqueue(job_timeout=...)", "value": JOB_TIMEOUT_S, "doc": RESULTS},
        {"name": "Queue.enqueue(retry=Retry(max=...))", "value": RETRIES, "doc": EXCEPTIONS},
    ],
    "lease_s": float(HOLD_S),
    "recovery_window_s": float(HOLD_S + MAINTENANCE_S + 10),
    "faults": every_fault("redis"),
    "promises": [],
    "caveats": [caveat("lost", ["kill9", "startup"], ABANDONED, RESULTS + "#dealing-with-interruptions")],
    "inspect_doc": RESULTS + "#job-results",
    "policies": [
        {
            "state": "failed",
            "reason": "AbandonedJobError",
            "setting": "Queue.enqueue(retry=Retry(max=2))",
            "quote": ABANDONED,
            "doc": RESULTS + "#dealing-with-interruptions",
        },
        {
            "state": "failed",
            "reason": "JobTimeoutException",
            "setting": "Queue.enqueue(job_timeout=...)",
            "quote": "After that, the worker kills the work horse and puts the job onto the failed queue, indicating "
            "the job timed out.",
            "doc": RESULTS + "#dealing-with-job-timeouts",
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(HOLD_S + MAINTENANCE_S),
            "rule": f"a job whose worker stopped heartbeating is abandoned once its StartedJobRegistry entry lapses "
            f"({HOLD_S} s, rq/worker/base.py) and the next maintenance run ({MAINTENANCE_S} s) retries it while "
            "Retry(max=2) has retries left",
            "quote": "Retry up to 3 times, failed job will be requeued immediately",
            "doc": EXCEPTIONS + "#retrying-failed-jobs",
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
            retry=Retry(max=RETRIES),
        )


def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as RQ's ``Job.fetch`` and its queue's registries give it (docs/runtime-faults.md)."""
    from redis import Redis
    from rq import Queue
    from rq.exceptions import NoSuchJobError
    from rq.job import Job as RqJob
    from rq.job import JobStatus
    from rq.registry import ScheduledJobRegistry, StartedJobRegistry

    connection = Redis.from_url(os.environ["ALKSTORE_FAULTS_BROKER"])
    queue = Queue(os.environ["ALKSTORE_FAULTS_QUEUE"], connection=connection)
    started = StartedJobRegistry(queue=queue)
    # Each entry is "{job_id}:{execution_id}", scored by when its hold lapses; no cleanup: inspect changes nothing.
    entries = cast(list[tuple[bytes, float]], connection.zrange(started.key, 0, -1, withscores=True))
    holds = {entry.decode().rsplit(":", 1)[0]: float(score) for entry, score in entries}
    states = []
    for job in jobs:
        state: State = {"job": job["id"], "reason": None, "until": None, "held_by": None, "attempts": None}
        try:
            fetched = RqJob.fetch(job["id"], connection=connection)
        except NoSuchJobError:
            states.append({**state, "state": "absent", "library_state": "NoSuchJobError"})
            continue
        status = fetched.get_status()
        results = fetched.results()
        state["library_state"] = status.value
        ran = status in (JobStatus.STARTED, JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED)
        state["attempts"] = RETRIES - (fetched.retries_left or 0) + ran
        if status == JobStatus.FINISHED:
            state["state"] = "completed"
        elif status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
            error = results[0].exc_string if results and results[0].exc_string else status.value
            state["state"], state["reason"] = "failed", error.strip().splitlines()[-1]
        elif status == JobStatus.QUEUED:
            state["state"] = "queued"
        elif status == JobStatus.STARTED:
            state["state"], state["held_by"] = "running", fetched.worker_name
            state["until"] = holds.get(job["id"])
        elif status == JobStatus.SCHEDULED:
            state["state"] = "scheduled"
            state["until"] = ScheduledJobRegistry(queue=queue).get_scheduled_time(fetched).timestamp()
        else:
            state["state"], state["reason"] = "unknown", f"RQ status {status.value}"
        states.append(state)
    return states


def worker() -> None:
    broker, queue = os.environ["ALKSTORE_FAULTS_BROKER"], os.environ["ALKSTORE_FAULTS_QUEUE"]
    name = f"{queue}-{os.environ['ALKSTORE_FAULTS_WORKER']}"
    options = ["--url", broker, "--name", name, "--path", ".", "--maintenance-interval", str(MAINTENANCE_S)]
    options += ["--job-monitoring-interval", str(MONITORING_S), "--worker-ttl", str(WORKER_TTL_S)]
    exec_console_script("rq", "worker", *options, queue)


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
