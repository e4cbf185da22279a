"""taskiq's side of the taskiq runner: the broker and the task, as a taskiq-redis user writes them.

The broker is taskiq-redis's ``RedisStreamBroker``, the one its README says supports acknowledgements, with the
README's ``RedisAsyncResultBackend`` and an expiry on its results, as the README asks.
"""

from __future__ import annotations

import os

from taskiq_redis import RedisAsyncResultBackend, RedisStreamBroker

from alkstore_faults.handler import perform_async

IDLE_TIMEOUT_MS = 10_000
RESULT_EX_TIME_S = 3600
URL = os.environ.get("ALKSTORE_FAULTS_BROKER") or "redis://127.0.0.1:6379/0"
QUEUE = os.environ.get("ALKSTORE_FAULTS_QUEUE") or "taskiq"

result_backend: RedisAsyncResultBackend[str] = RedisAsyncResultBackend(
    redis_url=URL, result_ex_time=RESULT_EX_TIME_S, keep_results=True
)
broker = RedisStreamBroker(url=URL, queue_name=QUEUE, idle_timeout=IDLE_TIMEOUT_MS).with_result_backend(result_backend)


@broker.task(task_name="run_job")
async def run_job(job: str, duration_s: float, fail: bool) -> str:
    return await perform_async(job, duration_s, fail, None)
