"""The saq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is saq's own ``saq tasks.settings`` command, as its README starts it, one job at a time. Each job is
enqueued with the three settings saq's ``Job`` documents for a job that must survive its worker: a ``timeout``
(its default, 10 s), a ``heartbeat`` of 5 s that the job beats every second while it runs (tasks.py) and
``retries`` of 3 (saq's default, 1, is one attempt: a swept job would be aborted, never run again). A worker's
sweep (every 5 s here) takes a job whose heartbeat lapsed: it asks its worker to abort it, waits for that, then
retries it while attempts remain and finishes it ``aborted`` otherwise.

``inspect`` asks ``Queue.job(key)`` for each job (the harness's id is saq's job key): its status, attempts, error
and last heartbeat. The one thing it reads beyond that API is whether the job's id is in the queue's active list
(``RedisQueue._active``), the only list saq's sweep reads: an active job out of it is swept by no one.
"""

from __future__ import annotations

import sys
import time
from importlib.metadata import version
from typing import Any

from alkstore_ecosystem_kit.runner_description import every_fault, promise

from alkstore_faults.runner_cli import Job, State, exec_console_script, serve

README = "https://github.com/tobymao/saq"
JOB = "https://github.com/tobymao/saq/blob/master/saq/job.py"
WORKER = "https://github.com/tobymao/saq/blob/master/saq/worker.py"
TIMEOUT_S = 10
HEARTBEAT_S = 5
RETRIES = 3
SWEEP_EVERY_S = 5
ABORT_WAIT_S = 5
"""How long a sweep waits for a stuck job's worker to acknowledge its abort (``Queue.sweep(abort=5.0)``)."""
HEARTBEAT = (
    "heartbeat (int): the maximum amount of time a job can survive without a heartbeat in seconds, defaults to 0 "
    "(disabled) a heartbeat can be triggered manually within a job by calling await job.update()"
)
DESCRIPTION = {
    "library": "saq",
    "version": version("saq"),
    "settings": [
        {"name": "Job(timeout=...)", "value": TIMEOUT_S, "doc": JOB},
        {"name": "Job(heartbeat=...)", "value": HEARTBEAT_S, "doc": JOB},
        {"name": "await job.update() every 1 s while the job runs", "value": 1.0, "doc": JOB},
        {"name": "Job(retries=...)", "value": RETRIES, "doc": JOB},
        {"name": "Job(key=...)", "value": "the harness's job id", "doc": JOB},
        {"name": "settings['concurrency']", "value": 1, "doc": README},
        {"name": "settings['timers']['sweep']", "value": SWEEP_EVERY_S, "doc": WORKER},
    ],
    "lease_s": float(HEARTBEAT_S),
    "recovery_window_s": float(HEARTBEAT_S + SWEEP_EVERY_S + ABORT_WAIT_S + 10),
    "faults": every_fault("redis"),
    "inspect_doc": README,
    "promises": [
        promise(
            "lost",
            ["kill9", "startup", "pause", "net_cut"],
            "Heartbeat monitor for abandoned jobs [...] Sweeping stuck jobs",
            README,
        )
    ],
    "caveats": [],
    "policies": [
        {
            "state": "failed",
            "reason": "TimeoutError",
            "setting": "Job(timeout=...)",
            "quote": "timeout (int): the maximum amount of time a job can run for in seconds, defaults to 10 "
            "(0 means disabled)",
            "doc": JOB,
        },
        {
            "state": "failed",
            "reason": "swept",
            "setting": "Job(retries=...)",
            "quote": "retries (int): the maximum number of attempts to retry a job, defaults to 1",
            "doc": JOB,
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(HEARTBEAT_S + SWEEP_EVERY_S + ABORT_WAIT_S),
            "rule": f"a job whose heartbeat lapsed ({HEARTBEAT_S} s) is swept by a worker's sweep (every "
            f"{SWEEP_EVERY_S} s), which waits up to {ABORT_WAIT_S} s for its abort and retries it while attempts "
            "remain",
            "quote": HEARTBEAT,
            "doc": JOB,
        }
    ],
}


def _queue() -> Any:
    from tasks import queue

    return queue


async def enqueue(jobs: list[Job]) -> None:
    queue = _queue()
    try:
        for job in jobs:
            enqueued = await queue.enqueue(
                "run_job",
                key=job["id"],
                timeout=TIMEOUT_S,
                heartbeat=HEARTBEAT_S,
                retries=RETRIES,
                job_id=job["id"],
                duration_s=job["duration_s"],
                fail=job["fail"],
            )
            if enqueued is None:
                raise RuntimeError(f"saq refused job {job['id']}: a job with that key exists")
    finally:
        await queue.disconnect()


def state_of(job: str, found: Any, swept: bool, now: float) -> State:
    """A job's state from saq's ``Job`` (``None``: saq has no record of it); ``swept``: its id is in the active list
    a sweep reads."""
    state: State = {"job": job, "reason": None, "until": None, "held_by": None, "attempts": None}
    if found is None:
        return {**state, "state": "absent", "library_state": "no job"}
    status = str(found.status.value)
    state.update(library_state=status, attempts=found.attempts, held_by=found.worker_id)
    if status == "complete":
        state["state"] = "completed"
    elif status in ("failed", "aborted"):
        error = (found.error or "").strip().splitlines()
        state.update(state="failed", reason=error[-1] if error else status)
    elif status in ("active", "aborting"):
        beat = (found.touched or found.started) / 1000
        until = max(beat + found.heartbeat, now) + SWEEP_EVERY_S + ABORT_WAIT_S if swept else None
        state.update(state="running", until=until)
    elif found.scheduled and found.scheduled > now:
        state.update(state="scheduled", until=float(found.scheduled))
    else:
        state["state"] = "queued"
    return state


async def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as saq's ``Queue.job`` gives it (docs/runtime-faults.md, inspect)."""
    queue = _queue()
    try:
        active = {job_id.decode() for job_id in await queue.redis.lrange(queue._active, 0, -1)}
        states = []
        for job in jobs:
            found = await queue.job(job["id"])
            swept = found is not None and found.id in active
            states.append(state_of(job["id"], found, swept, time.time()))
        return states
    finally:
        await queue.disconnect()


def worker() -> None:
    exec_console_script("saq", "tasks.settings")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
