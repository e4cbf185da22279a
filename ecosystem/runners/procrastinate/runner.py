"""The procrastinate runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is procrastinate's own ``procrastinate --app=tasks.app worker`` command with one job at a time. The
stalled-jobs recipe of its docs (a periodic task, every 10th minute) is not installed: its period is longer than a
run, and what the docs say happens without it is what this runner shows.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, exec_console_script, serve

STALLED = "https://procrastinate.readthedocs.io/en/stable/howto/production/retry_stalled_jobs.html"
WORKER = "https://procrastinate.readthedocs.io/en/stable/howto/basics/worker.html"
DESCRIPTION = {
    "library": "procrastinate",
    "version": version("procrastinate"),
    "settings": [
        {"name": "procrastinate worker --concurrency", "value": 1, "doc": WORKER},
        {"name": "PsycopgConnector(conninfo=...)", "value": "the throwaway cluster", "doc": WORKER},
    ],
    "lease_s": 10.0,
    "recovery_window_s": 15.0,
    "faults": ["kill9", "pause", "broker_restart", "net_cut", "slow_handler"],
    "promises": [],
    "caveats": [
        {
            "outcome": "lost",
            "faults": ["kill9"],
            "quote": "if no specific action is taken, these stalled jobs will remain in the queue forever, and their "
            "execution will never resume.",
            "doc": STALLED,
        }
    ],
}


def enqueue(jobs: list[Job]) -> None:
    from tasks import app, run_job

    with app.open():
        app.schema_manager.apply_schema()
        for job in jobs:
            run_job.defer(job=job["id"], duration_s=job["duration_s"], fail=job["fail"])


def worker() -> None:
    path = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}  # its console script does not put the app's directory on the path
    queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
    exec_console_script("procrastinate", "--app=tasks.app", "worker", "--concurrency", "1", "--queues", queue, env=env)


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
