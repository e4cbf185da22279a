"""huey's side of the huey runner: the Huey instance and the one task, as a huey user writes them.

With the one recipe huey's production page prescribes in code: a ``SIGNAL_INTERRUPTED`` handler that enqueues
again a task the consumer was running when it was told to stop (runner.py cites the page).
"""

from __future__ import annotations

import os
from typing import Any

from huey import RedisHuey
from huey.signals import SIGNAL_INTERRUPTED

from alkstore_faults.handler import perform

huey = RedisHuey(os.environ["ALKSTORE_FAULTS_QUEUE"], url=os.environ["ALKSTORE_FAULTS_BROKER"])


@huey.task()
def run_job(job: str, duration_s: float, fail: bool) -> str:
    return perform(job, duration_s, fail)


@huey.signal(SIGNAL_INTERRUPTED)
def enqueue_interrupted(signal: str, task: Any, *args: Any, **kwargs: Any) -> None:
    huey.enqueue(task)
