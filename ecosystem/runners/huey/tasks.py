"""huey's side of the huey runner: the Huey instance and the one task, as a huey user writes them."""

from __future__ import annotations

import os

from huey import RedisHuey

from alkstore_faults.handler import perform

huey = RedisHuey(os.environ["ALKSTORE_FAULTS_QUEUE"], url=os.environ["ALKSTORE_FAULTS_BROKER"])


@huey.task()
def run_job(job: str, duration_s: float, fail: bool) -> str:
    return perform(job, duration_s, fail)
