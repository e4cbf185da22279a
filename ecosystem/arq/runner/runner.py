"""The arq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is arq's own ``arq tasks.WorkerSettings`` command, as its docs start it, one job at a time, with a
5 s ``job_timeout``. arq marks a job it runs with an in-progress key that lasts the job timeout + 10 s
(``in_progress_timeout_s`` in arq/worker.py) and is never renewed: that is the hold after which another worker
may run a job whose worker died, since the job itself stays in the queue until it succeeded or failed. A
handler cannot outlive its job timeout on a live worker: arq cancels it and records the job as failed with a
``TimeoutError``, a failure by that documented setting (``policies``), not a loss.

``inspect`` asks arq's own ``Job(job_id, redis).status()`` and ``.info()`` (its result or its queued definition)
for each job; the one thing it reads beyond that API is the in-progress key's remaining life, which is the
``until`` of a held job.

``schedule`` (the schedule workload) is the same ``arq`` command with ``tasks.ScheduleSettings``: a cron job every
second, at the whole second, which every worker runs; arq's ``unique`` cron (its default) names each tick's job
after the tick, so that one job runs per tick however many workers enqueue it.
"""

from __future__ import annotations

import os
import sys
import time
from importlib.metadata import version
from typing import Any

from alkstore_ecosystem_kit.runner_description import caveat, every_fault, promise

from alkstore_faults.runner_cli import Job, State, exec_console_script, serve

DOCS = "https://arq-docs.helpmanual.io/"
WORKER = DOCS + "#arq.worker.Worker"
JOBS = DOCS + "#arq.jobs.Job"
JOB_TIMEOUT_S = 5
IN_PROGRESS_S = JOB_TIMEOUT_S + 10
"""arq's in-progress key lasts the longest job timeout + 10 s (arq/worker.py, ``in_progress_timeout_s``)."""
CRON = DOCS + "#arq.cron.cron"
UNIQUE = "If ``unique`` is true (the default) the job will only be run once even if multiple workers are running."
MULTIPLE_TIMES = "sometimes exactly once can be hard or impossible, arq favours multiple times over zero times."
RERUN = (
    "If the worker shuts down, the job will be cancelled immediately and will remain in the queue to be run again "
    "when the worker starts up again (or run by another worker which is still running)."
)
DESCRIPTION = {
    "library": "arq",
    "version": version("arq"),
    "settings": [
        {"name": "WorkerSettings.job_timeout", "value": JOB_TIMEOUT_S, "doc": WORKER},
        {"name": "WorkerSettings.max_jobs", "value": 1, "doc": WORKER},
        {"name": "enqueue_job(_job_id=...)", "value": "the harness's job id", "doc": DOCS + "#job-uniqueness"},
    ],
    "lease_s": float(IN_PROGRESS_S),
    "recovery_window_s": IN_PROGRESS_S + 10.0,
    "faults": every_fault("redis"),
    "inspect_doc": JOBS,
    "workloads": ["jobs", "schedule"],
    "schedule": {
        "every_s": 1,
        "schedulers": "every",
        "grace_s": 5,
        "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut"],
        "settings": [
            {"name": "cron(tick, second=set(range(60)), microsecond=0)", "value": "every second", "doc": CRON},
            {"name": "cron(unique=...)", "value": True, "doc": CRON},
            {"name": "WorkerSettings.cron_jobs", "value": "in every worker", "doc": CRON},
        ],
        "promises": [promise("tick_twice", ["*"], UNIQUE, CRON)],
        "caveats": [caveat("tick_twice", ["*"], MULTIPLE_TIMES, DOCS + "#usage")],
    },
    "promises": [promise("lost", ["kill9", "startup", "pause", "net_cut"], RERUN, DOCS + "#usage")],
    "caveats": [
        caveat("twice", ["*"], MULTIPLE_TIMES, DOCS + "#usage"),
    ],
    "policies": [
        {
            "state": "failed",
            "reason": "TimeoutError",
            "setting": "WorkerSettings.job_timeout",
            "quote": "default job timeout (max run time)",
            "doc": WORKER,
        },
        {
            "state": "failed",
            "reason": "retries exceeded",
            "setting": "WorkerSettings.max_tries",
            "quote": "default maximum number of times to retry a job",
            "doc": WORKER,
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(IN_PROGRESS_S),
            "rule": f"a job stays in arq's queue while it runs; once its in-progress key lapses ({JOB_TIMEOUT_S} s job "
            "timeout + 10 s, arq/worker.py) a running worker takes it again",
            "quote": RERUN,
            "doc": DOCS + "#usage",
        }
    ],
}


async def _pool() -> Any:
    from arq import create_pool
    from arq.connections import RedisSettings

    return await create_pool(RedisSettings.from_dsn(os.environ["ALKSTORE_FAULTS_BROKER"]))


async def enqueue(jobs: list[Job]) -> None:
    pool = await _pool()
    try:
        for job in jobs:
            queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
            args = (job["id"], job["duration_s"], job["fail"])
            if await pool.enqueue_job("run_job", *args, _job_id=job["id"], _queue_name=queue) is None:
                raise RuntimeError(f"arq refused job {job['id']}: a job with that id exists")
    finally:
        await pool.aclose()


async def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as arq's ``Job.status()`` and ``Job.info()`` give it (docs/runtime-faults.md, inspect)."""
    from arq.constants import in_progress_key_prefix
    from arq.jobs import Job as ArqJob
    from arq.jobs import JobResult, JobStatus

    pool = await _pool()
    states = []
    try:
        for job in jobs:
            handle = ArqJob(job["id"], pool, _queue_name=os.environ["ALKSTORE_FAULTS_QUEUE"])
            status = await handle.status()
            info = await handle.info()
            state: State = {"job": job["id"], "library_state": status.value, "reason": None, "until": None}
            state["held_by"] = None  # arq records no worker id for a job it runs
            state["attempts"] = None if info is None else info.job_try
            if status is JobStatus.complete and isinstance(info, JobResult):
                state["state"] = "completed" if info.success else "failed"
                if not info.success:
                    error = info.result  # the exception arq recorded; TimeoutError has no message
                    state["reason"] = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            elif status is JobStatus.in_progress:
                held_ms = await pool.pttl(in_progress_key_prefix + job["id"])
                state["state"] = "running"
                state["until"] = None if held_ms < 0 else time.time() + held_ms / 1000
            elif status is JobStatus.queued:
                state["state"] = "queued"
            elif status is JobStatus.deferred and info is not None and info.score is not None:
                state["state"], state["until"] = "scheduled", info.score / 1000
            elif status is JobStatus.not_found:
                state["state"] = "absent"
            else:
                state["state"], state["reason"] = "unknown", f"arq says {status.value} with info {info!r}"
            states.append(state)
    finally:
        await pool.aclose()
    return states


def worker() -> None:
    exec_console_script("arq", "tasks.WorkerSettings")


def schedule() -> None:
    exec_console_script("arq", "tasks.ScheduleSettings")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect, schedule=schedule))
