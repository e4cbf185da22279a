"""The taskiq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is taskiq's own ``taskiq worker tasks:broker`` command, one worker process, over taskiq-redis's
``RedisStreamBroker`` (tasks.py): a Redis stream read through a consumer group, a message acknowledged (``XACK``)
after its result is saved (taskiq's default ``--ack-type when_saved``). A message a consumer read and never
acknowledged stays in the group's pending list; a worker claims it (``XAUTOCLAIM``) once it has been idle
``idle_timeout`` (10 s here; 10 minutes by default). taskiq-redis 1.2.4 runs that claim in its listen loop after a
read that returned new messages (taskiq_redis/redis_broker.py, ``listen``).

taskiq-redis needs redis>=8 and arq (the ``faults`` extra) redis<6: the runner runs in ``.venv-taskiq`` (the
``faults-taskiq`` extra, made by ci/faults.sh install), named ``{python:taskiq}`` in runner.json.

``inspect`` reads each task's result through the result backend (``is_result_ready``, ``get_result``) and, for a
task with none, the stream the README describes: its entry (``XRANGE``), the group's pending list (``XPENDING``)
and the group's last delivered id (``XINFO GROUPS``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib.metadata import version
from typing import Any

from alkstore_ecosystem_kit.runner_description import every_fault, promise

from alkstore_faults.runner_cli import Job, State, exec_console_script, serve

README = "https://github.com/taskiq-python/taskiq-redis"
BROKER = "https://github.com/taskiq-python/taskiq-redis/blob/master/taskiq_redis/redis_broker.py"
WORKER = "https://taskiq-python.github.io/guide/cli.html#worker"
IDLE_TIMEOUT_S = 10.0
DURABLE = (
    "This broker **supports** acknowledgements and therefore is fine to use in cases when data durability is required."
)
DESCRIPTION = {
    "library": "taskiq",
    "version": f"taskiq {version('taskiq')}, taskiq-redis {version('taskiq-redis')}",
    "settings": [
        {
            "name": "RedisStreamBroker(url=..., queue_name=...)",
            "value": "the throwaway broker and run's queue",
            "doc": README,
        },
        {"name": "RedisStreamBroker(idle_timeout=...) (ms)", "value": 10_000, "doc": BROKER},
        {"name": "RedisAsyncResultBackend(result_ex_time=...)", "value": 3600, "doc": README},
        {"name": "taskiq worker --workers", "value": 1, "doc": WORKER},
        {"name": "taskiq worker --ack-type", "value": "when_saved (the default)", "doc": WORKER},
        {"name": "kicker().with_task_id(...)", "value": "the harness's job id", "doc": README},
    ],
    "lease_s": IDLE_TIMEOUT_S,
    "recovery_window_s": IDLE_TIMEOUT_S + 10,
    "faults": every_fault("redis"),
    "inspect_doc": README,
    "promises": [
        promise("lost", ["kill9", "startup", "pause", "net_cut", "broker_restart_aof"], DURABLE, README),
    ],
    "caveats": [],
    "policies": [],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": IDLE_TIMEOUT_S,
            "rule": "a message read and not acknowledged is claimed by a listening worker (XAUTOCLAIM) once idle "
            "idle_timeout (10 s), in the listen loop after a read that returned new messages",
            "quote": DURABLE,
            "doc": README,
        },
    ],
}


async def enqueue(jobs: list[Job]) -> None:
    from tasks import broker, run_job

    await broker.startup()
    try:
        for job in jobs:
            await run_job.kicker().with_task_id(job["id"]).kiq(job["id"], job["duration_s"], job["fail"])
    finally:
        await broker.shutdown()


async def inspect(jobs: list[Job]) -> list[State]:
    """Each task's state from its result, else from the stream and its group (docs/runtime-faults.md, inspect)."""
    from redis.asyncio import Redis
    from tasks import QUEUE, URL, broker, result_backend

    redis = Redis.from_url(URL)
    try:
        entries = {
            json.loads(fields[b"data"])["task_id"]: entry.decode() for entry, fields in await redis.xrange(QUEUE)
        }
        group = next(g for g in await redis.xinfo_groups(QUEUE) if g["name"].decode() == broker.consumer_group_name)
        last = group["last-delivered-id"].decode()
        pending = {
            row["message_id"].decode(): row
            for row in await redis.xpending_range(QUEUE, broker.consumer_group_name, "-", "+", 1000)
        }
        states = []
        now = time.time()
        for job in jobs:
            state: State = {"job": job["id"], "reason": None, "until": None, "held_by": None, "attempts": None}
            entry = entries.get(job["id"])
            if await result_backend.is_result_ready(job["id"]):
                result: Any = await result_backend.get_result(job["id"])
                if result.is_err:
                    state.update(state="failed", library_state="result (error)", reason=repr(result.error))
                else:
                    state.update(state="completed", library_state="result")
            elif entry is not None and entry in pending:
                row = pending[entry]
                idle_s = row["time_since_delivered"] / 1000
                state.update(
                    state="running",
                    library_state="pending (read, not acknowledged)",
                    held_by=row["consumer"].decode(),
                    attempts=row["times_delivered"],
                    until=now - idle_s + IDLE_TIMEOUT_S,  # the hold lapses idle_timeout after the last delivery
                )
            elif entry is not None and _after(entry, last):
                state.update(state="queued", library_state="in the stream, not yet delivered")
            elif entry is not None:
                state.update(state="absent", library_state="acknowledged, no result")
            else:
                state.update(state="absent", library_state="no stream entry, no result")
            states.append(state)
        return states
    finally:
        await redis.aclose()
        await result_backend.shutdown()


def _after(entry: str, last: str) -> bool:
    """Whether stream id ``entry`` comes after ``last`` (``ms-seq`` ids)."""
    left, right = entry.split("-"), last.split("-")
    return (int(left[0]), int(left[1])) > (int(right[0]), int(right[1]))


def worker() -> None:
    exec_console_script("taskiq", "worker", "tasks:broker", "--workers", "1", "--no-configure-logging")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", os.getcwd())
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
