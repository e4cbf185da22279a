"""procrastinate's side of the schedule workload: a periodic task every second, on the app that carries the
stalled-jobs recipe (``recovery.py``), as its cron how-to writes one: ``@app.periodic(cron=...)`` over
``@app.task``, the task taking the tick's ``timestamp``. Every worker defers it; the database keeps one job per
tick.
"""

from __future__ import annotations

import os

from procrastinate import JobContext
from recovery import app

from alkstore_faults.handler import perform_tick

CRON = "* * * * * *"
"""Every second: the how-to's optional sixth column, seconds."""


@app.periodic(cron=CRON)
@app.task(name="tick", queue=os.environ.get("ALKSTORE_FAULTS_QUEUE", "default"), pass_context=True)
def tick(context: JobContext, timestamp: int) -> None:
    job = context.job
    perform_tick(float(timestamp), job.attempts, None if job.id is None else str(job.id))


__all__ = ["app", "tick"]
