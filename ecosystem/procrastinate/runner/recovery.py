"""procrastinate's production recipe for stalled jobs, as its "Retry stalled jobs" how-to writes it.

A worker killed with SIGKILL leaves its job in ``doing``; the how-to's periodic task retries the jobs of workers
whose heartbeat is older than 30 s. The runner's production worker loads this module (``--app=recovery.app``),
so every worker defers and runs the recipe; the ``procrastinate-no-recovery`` variant loads ``tasks.app`` alone.
The period is the runner's one change to the recipe: every 5 s (a cron's sixth column, seconds) instead of the
how-to's example, every 10th minute, which is longer than a run.
"""

from __future__ import annotations

import os

from procrastinate import JobContext
from tasks import app

PERIOD_S = 5
CRON = f"* * * * * */{PERIOD_S}"


@app.periodic(cron=CRON)
@app.task(
    name="retry_stalled_jobs",
    queue=os.environ.get("ALKSTORE_FAULTS_QUEUE", "default"),
    queueing_lock="retry_stalled_jobs",
    pass_context=True,
)
async def retry_stalled_jobs(context: JobContext, timestamp: int) -> None:
    stalled_jobs = await app.job_manager.get_stalled_jobs()
    for job in stalled_jobs:
        await app.job_manager.retry_job(job)


__all__ = ["app", "retry_stalled_jobs"]
