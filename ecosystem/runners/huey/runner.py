"""The huey runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is huey's own consumer, ``huey_consumer tasks.huey``, as huey's docs start it, with one worker
thread. huey is the control of the matrix: its docs say a task mid-execution when the consumer dies is lost.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, exec_console_script, serve

GUIDE = "https://huey.readthedocs.io/en/latest/guide.html"
CONSUMER = "https://huey.readthedocs.io/en/latest/consumer.html"
DESCRIPTION = {
    "library": "huey",
    "version": version("huey"),
    "settings": [
        {"name": "RedisHuey(url=...)", "value": "the throwaway broker", "doc": GUIDE},
        {"name": "huey_consumer --workers", "value": 1, "doc": CONSUMER},
        {"name": "huey_consumer --worker-type", "value": "thread", "doc": CONSUMER},
    ],
    "lease_s": 3.0,
    "recovery_window_s": 5.0,
    "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut", "slow_handler"],
    "promises": [
        {
            "outcome": "twice",
            "faults": ["*"],
            "max": 0,
            "quote": "tasks are delivered at-most-once",
            "doc": GUIDE,
        }
    ],
    "caveats": [
        {
            "outcome": "lost",
            "faults": ["kill9"],
            "quote": "if the consumer is killed with SIGTERM or crashes, tasks that are mid-execution are lost and "
            "will not be retried automatically",
            "doc": GUIDE,
        }
    ],
}


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    for job in jobs:
        run_job(job["id"], job["duration_s"], job["fail"])


def worker() -> None:
    exec_console_script("huey_consumer", "tasks.huey", "--workers", "1", "--worker-type", "thread")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
