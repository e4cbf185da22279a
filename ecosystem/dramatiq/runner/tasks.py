"""Dramatiq's side of the Dramatiq runner: the Redis broker, its result store and the one actor, as a Dramatiq
user writes them (runner.py cites each setting)."""

from __future__ import annotations

import os

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.results import Results
from dramatiq.results.backends import RedisBackend

from alkstore_faults.handler import perform

HEARTBEAT_TIMEOUT_MS = 5000
MAINTENANCE_CHANCE = 1_000_000

broker = RedisBroker(
    url=os.environ["ALKSTORE_FAULTS_BROKER"],
    heartbeat_timeout=HEARTBEAT_TIMEOUT_MS,
    maintenance_chance=MAINTENANCE_CHANCE,
)
results = RedisBackend(url=os.environ["ALKSTORE_FAULTS_BROKER"])
broker.add_middleware(Results(backend=results))
dramatiq.set_broker(broker)


@dramatiq.actor(queue_name=os.environ["ALKSTORE_FAULTS_QUEUE"], max_retries=0, store_results=True)
def run_job(job: str, duration_s: float, fail: bool) -> str:
    message = dramatiq.middleware.CurrentMessage.get_current_message()
    retries = None if message is None else message.options.get("retries")
    return perform(job, duration_s, fail, None if retries is None else retries + 1)
