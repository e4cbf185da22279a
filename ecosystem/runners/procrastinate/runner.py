"""The procrastinate runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is procrastinate's own ``procrastinate --app=tasks.app worker`` command with one job at a time. The
stalled-jobs recipe of its docs (a periodic task, every 10th minute) is not installed: its period is longer than a
run, and what the docs say happens without it is what this runner shows.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

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


def main() -> int:
    command = sys.argv[1]
    if command == "describe":
        sys.stdout.write(json.dumps(DESCRIPTION) + "\n")
    elif command == "enqueue":
        from tasks import app, run_job

        from alkstore_faults.handler import read_jobs

        with app.open():
            app.schema_manager.apply_schema()
            for job in read_jobs(sys.argv[2]):
                run_job.defer(job=job["id"], duration_s=job["duration_s"], fail=job["fail"])
    elif command == "worker":
        procrastinate = Path(sys.executable).parent / "procrastinate"
        argv = [str(procrastinate), "--app=tasks.app", "worker", "--concurrency", "1"]
        path = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}  # its console script does not put the app's directory on the path
        os.execve(procrastinate, [*argv, "--queues", os.environ["ALKSTORE_FAULTS_QUEUE"]], env)
    else:
        sys.stderr.write(f"unknown command {command!r}: describe, enqueue JOBS_FILE or worker\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
