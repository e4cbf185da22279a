"""The Dramatiq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is Dramatiq's own ``dramatiq tasks`` command with one process and one thread, as its docs start it;
its Redis broker's ``heartbeat_timeout`` is 5 s (default 60 s) and its ``maintenance_chance`` a million in a
million, so a dead worker's messages are requeued within seconds rather than minutes — both documented
parameters of ``RedisBroker``.

``inspect`` reads what Dramatiq documents for reading a message's outcome: its ``Results`` middleware (on the same
Redis, ``store_results=True``), which stores an actor's return value, or its exception once the message failed
for good and went to the dead-letter queue. A message with neither is ``unknown``: Dramatiq documents no API
that tells a queued message from one held by a worker or one gone, so the runner does not guess. Dramatiq
assigns its own message ids: ``enqueue`` keeps each sent message in the run's state directory
(``ALKSTORE_FAULTS_STATE``) for ``Message.get_result``.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

from alkstore_ecosystem_kit.runner_description import caveat, every_fault, promise

from alkstore_faults.runner_cli import NO_STATE, Job, State, exec_console_script, serve, states_of

BROKER = "https://dramatiq.io/reference.html#dramatiq.brokers.redis.RedisBroker"
ADVANCED = "https://dramatiq.io/advanced.html#message-persistence"
PRACTICES = "https://dramatiq.io/best_practices.html#retriable-actors"
CLI = "https://dramatiq.io/guide.html#running-workers"
RESULTS = "https://dramatiq.io/cookbook.html#results"
HEARTBEAT_TIMEOUT_S = 5
DESCRIPTION = {
    "library": "dramatiq",
    "version": version("dramatiq"),
    "settings": [
        {"name": "RedisBroker(heartbeat_timeout=...)", "value": HEARTBEAT_TIMEOUT_S * 1000, "doc": BROKER},
        {"name": "RedisBroker(maintenance_chance=...)", "value": 1_000_000, "doc": BROKER},
        {"name": "actor(max_retries=...)", "value": 0, "doc": "https://dramatiq.io/guide.html#message-retries"},
        {"name": "dramatiq --processes / --threads", "value": "1 / 1", "doc": CLI},
        {"name": "Results(backend=RedisBackend(...)), actor(store_results=True)", "value": True, "doc": RESULTS},
    ],
    "lease_s": float(HEARTBEAT_TIMEOUT_S),
    "recovery_window_s": HEARTBEAT_TIMEOUT_S + 10.0,
    "faults": every_fault("redis"),
    "promises": [
        promise(
            "lost",
            ["kill9", "startup", "pause", "net_cut", "slow_handler"],
            "any messages that are in flight when a worker is terminated are going to be redelivered later",
            ADVANCED,
        )
    ],
    "caveats": [
        caveat(
            "twice",
            ["*"],
            "Dramatiq actors may receive the same message multiple times in the event of a worker failure "
            "(hardware, network or power failure).",
            PRACTICES,
        )
    ],
    "inspect_doc": RESULTS,
    "policies": [],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(HEARTBEAT_TIMEOUT_S),
            "rule": f"a worker silent for heartbeat_timeout ({HEARTBEAT_TIMEOUT_S} s) is offline, and the next queue "
            "maintenance (every command, maintenance_chance a million in a million) requeues its messages",
            "quote": "The amount of time (in ms) that has to pass without a heartbeat for a broker process to be "
            "considered offline.",
            "doc": BROKER,
        }
    ],
}


def _messages_file() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "dramatiq-messages.json"


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    sent = json.loads(_messages_file().read_text()) if _messages_file().exists() else {}
    for job in jobs:
        sent[job["id"]] = run_job.send(job["id"], job["duration_s"], job["fail"]).encode().decode()
    _messages_file().write_text(json.dumps(sent))


def inspect(jobs: list[Job]) -> list[State]:
    """Each job's outcome as Dramatiq's result store holds it (docs/runtime-faults.md, inspect)."""
    from dramatiq import Message
    from dramatiq.results import ResultFailure, ResultMissing
    from tasks import results

    def state_of(sent: str) -> State:
        state: State = dict(NO_STATE)
        try:
            Message.decode(sent.encode()).get_result(backend=results)
            state["state"], state["library_state"] = "completed", "result stored"
        except ResultFailure as failure:
            state["state"], state["library_state"] = "dead", "exception stored (dead-lettered)"
            state["reason"] = str(failure)
        except ResultMissing:
            state["state"], state["library_state"] = "unknown", "ResultMissing"
            state["reason"] = "no result stored; Dramatiq documents no API to read a queued or in-flight message"
        return state

    return states_of(jobs, json.loads(_messages_file().read_text()), state_of)


def worker() -> None:
    exec_console_script("dramatiq", "tasks", "--processes", "1", "--threads", "1")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
