"""The huey runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is huey's own consumer, ``huey_consumer tasks.huey``, as huey's docs start it, with one worker
thread. huey is the control of the matrix: its docs say a task mid-execution when the consumer dies is lost.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

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


def main() -> int:
    command = sys.argv[1]
    if command == "describe":
        sys.stdout.write(json.dumps(DESCRIPTION) + "\n")
    elif command == "enqueue":
        from tasks import run_job

        from alkstore_faults.handler import read_jobs

        for job in read_jobs(sys.argv[2]):
            run_job(job["id"], job["duration_s"], job["fail"])
    elif command == "worker":
        consumer = Path(sys.executable).parent / "huey_consumer"
        os.execv(consumer, [str(consumer), "tasks.huey", "--workers", "1", "--worker-type", "thread"])
    else:
        sys.stderr.write(f"unknown command {command!r}: describe, enqueue JOBS_FILE or worker\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
