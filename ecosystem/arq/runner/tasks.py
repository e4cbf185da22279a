"""arq's side of the arq runner: the job coroutine and ``WorkerSettings``, as an arq user writes them; for
the schedule workload a cron job every second (``ScheduleSettings``), which every worker runs, as arq's docs have it.
"""

from __future__ import annotations

import os
from typing import Any

from arq import cron
from arq.connections import RedisSettings

from alkstore_faults.handler import perform_async, perform_tick_async

JOB_TIMEOUT_S = 5


async def run_job(ctx: dict[str, Any], job: str, duration_s: float, fail: bool) -> str:
    return await perform_async(job, duration_s, fail, ctx.get("job_try"))


class WorkerSettings:
    functions = [run_job]  # noqa: RUF012 - arq reads these class attributes
    redis_settings = RedisSettings.from_dsn(os.environ.get("ALKSTORE_FAULTS_BROKER") or "redis://127.0.0.1:6379/0")
    queue_name = os.environ.get("ALKSTORE_FAULTS_QUEUE", "arq:queue")
    job_timeout = JOB_TIMEOUT_S
    max_jobs = 1


async def tick(ctx: dict[str, Any]) -> None:
    """The periodic handler: arq's cron names the job ``cron:tick:<the tick's time in ms>`` (``unique=True``)."""
    job = str(ctx["job_id"])
    await perform_tick_async(int(job.rsplit(":", 1)[1]) / 1000, ctx.get("job_try"), job)


class ScheduleSettings(WorkerSettings):
    functions = []  # noqa: RUF012 - arq reads these class attributes
    cron_jobs = [cron(tick, second=set(range(60)), microsecond=0)]  # noqa: RUF012
