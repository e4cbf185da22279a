"""The arq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is arq's own ``arq tasks.WorkerSettings`` command, as its docs start it, one job at a time, with a
5 s ``job_timeout``: arq's in-progress key lasts the job timeout + 10 s and is never renewed, so that is the
lease after which another worker may run a job whose worker died. A handler cannot outlive that lease on a
live worker: arq cancels it at its job timeout and the job fails, which the checker, reading the handlers'
ledger, counts as lost (a caveat, not a broken promise).
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, exec_console_script, serve

DOCS = "https://arq-docs.helpmanual.io/"
DESCRIPTION = {
    "library": "arq",
    "version": version("arq"),
    "settings": [
        {"name": "WorkerSettings.job_timeout", "value": 5, "doc": DOCS + "#arq.worker.Worker"},
        {"name": "WorkerSettings.max_jobs", "value": 1, "doc": DOCS + "#arq.worker.Worker"},
        {"name": "enqueue_job(_job_id=...)", "value": "the harness's job id", "doc": DOCS + "#job-uniqueness"},
    ],
    "lease_s": 15.0,
    "recovery_window_s": 25.0,
    "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut", "slow_handler"],
    "promises": [
        {
            "outcome": "lost",
            "faults": ["kill9", "pause", "net_cut"],
            "max": 0,
            "quote": "jobs aren't removed from the queue until they've either succeeded or failed",
            "doc": DOCS + "#simple-usage",
        }
    ],
    "caveats": [
        {
            "outcome": "lost",
            "faults": ["slow_handler"],
            "quote": "job_timeout: default job timeout (max run time)",
            "doc": DOCS + "#arq.worker.Worker",
        },
        {
            "outcome": "twice",
            "faults": ["*"],
            "quote": "Jobs may be called more than once! [...] arq favours multiple times over zero times.",
            "doc": DOCS + "#simple-usage",
        },
    ],
}


async def enqueue(jobs: list[Job]) -> None:
    from arq import create_pool
    from arq.connections import RedisSettings

    pool = await create_pool(RedisSettings.from_dsn(os.environ["ALKSTORE_FAULTS_BROKER"]))
    try:
        for job in jobs:
            queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
            args = (job["id"], job["duration_s"], job["fail"])
            if await pool.enqueue_job("run_job", *args, _job_id=job["id"], _queue_name=queue) is None:
                raise RuntimeError(f"arq refused job {job['id']}: a job with that id exists")
    finally:
        await pool.aclose()


def worker() -> None:
    exec_console_script("arq", "tasks.WorkerSettings")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
