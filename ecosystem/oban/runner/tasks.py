"""oban's side of its runner: the one worker class, as oban's "Writing Jobs" guide writes a class worker.

oban runs a job's ``process`` on its event loop, so the handler is the asyncio one (``perform_async``): it
writes ``cancelled`` when oban's ``timeout`` cancels it. ``max_attempts`` and the timeout are the worker's
defaults for every job it enqueues.
"""

from __future__ import annotations

import os
from typing import Any

from oban import worker

from alkstore_faults.handler import perform_async

MAX_ATTEMPTS = 3
TIMEOUT_S = 30.0


@worker(queue=os.environ.get("ALKSTORE_FAULTS_QUEUE") or "default", max_attempts=MAX_ATTEMPTS)
class RunJob:
    async def process(self, job: Any) -> None:
        arguments = job.args
        await perform_async(arguments["job"], float(arguments["duration_s"]), bool(arguments["fail"]), job.attempt)

    def timeout(self, job: Any) -> float:
        return TIMEOUT_S
