"""The Dramatiq runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is Dramatiq's own ``dramatiq tasks`` command with one process and one thread, as its docs start it;
its Redis broker's ``heartbeat_timeout`` is 5 s (default 60 s) and its ``maintenance_chance`` a million in a
million, so a dead worker's messages are requeued within seconds rather than minutes — both documented
parameters of ``RedisBroker``.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, exec_console_script, serve

BROKER = "https://dramatiq.io/reference.html#dramatiq.brokers.redis.RedisBroker"
ADVANCED = "https://dramatiq.io/advanced.html#message-persistence"
PRACTICES = "https://dramatiq.io/best_practices.html#retriable-actors"
CLI = "https://dramatiq.io/guide.html#running-workers"
DESCRIPTION = {
    "library": "dramatiq",
    "version": version("dramatiq"),
    "settings": [
        {"name": "RedisBroker(heartbeat_timeout=...)", "value": 5000, "doc": BROKER},
        {"name": "RedisBroker(maintenance_chance=...)", "value": 1_000_000, "doc": BROKER},
        {"name": "actor(max_retries=...)", "value": 0, "doc": "https://dramatiq.io/guide.html#message-retries"},
        {"name": "dramatiq --processes / --threads", "value": "1 / 1", "doc": CLI},
    ],
    "lease_s": 5.0,
    "recovery_window_s": 15.0,
    "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut", "slow_handler"],
    "promises": [
        {
            "outcome": "lost",
            "faults": ["kill9", "pause", "net_cut", "slow_handler"],
            "max": 0,
            "quote": "any messages that are in flight when a worker is terminated are going to be redelivered later",
            "doc": ADVANCED,
        }
    ],
    "caveats": [
        {
            "outcome": "twice",
            "faults": ["*"],
            "quote": "Dramatiq actors may receive the same message multiple times in the event of a worker failure "
            "(hardware, network or power failure).",
            "doc": PRACTICES,
        }
    ],
}


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    for job in jobs:
        run_job.send(job["id"], job["duration_s"], job["fail"])


def worker() -> None:
    exec_console_script("dramatiq", "tasks", "--processes", "1", "--threads", "1")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
