"""saq's side of the saq runner: the job function and the worker's settings, as a saq user writes them.

The job beats its heart (``await job.update()``, the call saq's ``Job`` documents for it) every
``BEAT_EVERY_S`` while its handler runs, so the worker's sweep takes a job away only from a worker that stopped
beating: one killed, stopped or cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from saq import Queue

from alkstore_faults.handler import perform_async

HEARTBEAT_S = 5
BEAT_EVERY_S = 1.0
SWEEP_EVERY_S = 5

queue = Queue.from_url(
    os.environ.get("ALKSTORE_FAULTS_BROKER") or "redis://127.0.0.1:6379/0",
    name=os.environ.get("ALKSTORE_FAULTS_QUEUE") or "default",
)


async def _beat(job: Any) -> None:
    while True:
        await asyncio.sleep(BEAT_EVERY_S)
        await job.update()


async def run_job(ctx: dict[str, Any], *, job_id: str, duration_s: float, fail: bool) -> str:
    job = ctx["job"]
    beating = asyncio.create_task(_beat(job))
    try:
        return await perform_async(job_id, duration_s, fail, job.attempts)
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating


settings = {
    "queue": queue,
    "functions": [run_job],
    "concurrency": 1,
    "timers": {"sweep": SWEEP_EVERY_S},
}
