"""arq's side of the arq runner: the job coroutine and ``WorkerSettings``, as an arq user writes them."""

from __future__ import annotations

import os
from typing import Any

from arq.connections import RedisSettings

from alkstore_faults.handler import perform_async

JOB_TIMEOUT_S = 5


async def run_job(ctx: dict[str, Any], job: str, duration_s: float, fail: bool) -> str:
    return await perform_async(job, duration_s, fail, ctx.get("job_try"))


class WorkerSettings:
    functions = [run_job]  # noqa: RUF012 - arq reads these class attributes
    redis_settings = RedisSettings.from_dsn(os.environ.get("ALKSTORE_FAULTS_BROKER") or "redis://127.0.0.1:6379/0")
    queue_name = os.environ.get("ALKSTORE_FAULTS_QUEUE", "arq:queue")
    job_timeout = JOB_TIMEOUT_S
    max_jobs = 1
