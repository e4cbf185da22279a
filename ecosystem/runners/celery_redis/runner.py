"""The Celery runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is Celery's own ``celery -A tasks worker`` with the prefork pool and one child, as its docs start
it; its settings are in tasks.py. The same runner serves Celery on RabbitMQ (ecosystem/runners/celery_rabbitmq
names this directory's runner.py with ``--transport amqp``): only the broker and the promises differ.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from pathlib import Path

from alkstore_faults.runner_cli import Job, exec_console_script, serve

CONFIG = "https://docs.celeryq.dev/en/stable/userguide/configuration.html"
REDIS = "https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html"
KOMBU_REDIS = "https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.transport.redis.html"
TASKS = "https://docs.celeryq.dev/en/stable/userguide/tasks.html"
SETTINGS = [
    {"name": "task_acks_late", "value": True, "doc": CONFIG + "#task-acks-late"},
    {"name": "task_reject_on_worker_lost", "value": True, "doc": CONFIG + "#task-reject-on-worker-lost"},
    {"name": "worker_prefetch_multiplier", "value": 1, "doc": CONFIG + "#worker-prefetch-multiplier"},
    {"name": "celery worker --pool / --concurrency", "value": "prefork / 1", "doc": CONFIG + "#worker-concurrency"},
]
ACKS_LATE = {
    "outcome": "lost",
    "faults": ["kill9", "pause", "net_cut", "slow_handler"],
    "max": 0,
    "quote": "A task message is not removed from the queue until that message has been acknowledged by a worker. A "
    "worker can reserve many messages in advance and even if the worker is killed -- by power failure or some other "
    "reason -- the message will be redelivered to another worker.",
    "doc": TASKS,
}
TWICE = {
    "outcome": "twice",
    "faults": ["*"],
    "quote": "Note: This means the task may be executed multiple times should the worker crash in the middle of "
    "execution.",
    "doc": TASKS + "#Task.acks_late",
}


def describe(transport: str) -> dict[str, object]:
    if transport == "redis":
        settings = [
            *SETTINGS,
            {"name": "broker_transport_options.visibility_timeout", "value": 10, "doc": REDIS},
            {"name": "broker_transport_options.unacked_restore_interval", "value": 1, "doc": KOMBU_REDIS},
            {"name": "broker_transport_options.unacked_restore_throttle", "value": 1, "doc": KOMBU_REDIS},
        ]
        caveats = [
            TWICE,
            {
                "outcome": "twice",
                "faults": ["slow_handler", "pause"],
                "quote": "If a task isn't acknowledged within the Visibility Timeout the task will be redelivered to "
                "another worker and executed.",
                "doc": REDIS + "#visibility-timeout",
            },
        ]
        lease, window = 10.0, 30.0
        faults = ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut", "slow_handler"]
    else:
        settings = [*SETTINGS, {"name": "broker_heartbeat", "value": 5, "doc": CONFIG + "#broker-heartbeat"}]
        caveats = [TWICE]
        lease, window = 10.0, 30.0
        faults = ["kill9", "pause", "broker_restart", "net_cut", "slow_handler"]
    return {
        "library": f"celery+{transport}",
        "version": f"celery {version('celery')}, kombu {version('kombu')}",
        "settings": settings,
        "lease_s": lease,
        "recovery_window_s": window,
        "faults": faults,
        "promises": [ACKS_LATE],
        "caveats": caveats,
    }


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    for job in jobs:
        run_job.apply_async((job["id"], job["duration_s"], job["fail"]), task_id=job["id"])


def worker() -> None:
    name = f"{os.environ['ALKSTORE_FAULTS_WORKER']}@{os.environ['ALKSTORE_FAULTS_QUEUE']}"
    options = ["--pool", "prefork", "--concurrency", "1", "-n", name, "--loglevel", "INFO"]
    exec_console_script("celery", "-A", "tasks", "worker", *options, "--without-gossip", "--without-mingle")


def main() -> int:
    os.chdir(Path(__file__).resolve().parent)  # the celery_rabbitmq runner runs this file from its own directory
    arguments = sys.argv[1:]
    transport = "redis"
    if arguments[:2] == ["--transport", "amqp"]:
        transport, arguments = "amqp", arguments[2:]
    return serve(describe(transport), enqueue, worker, arguments)


if __name__ == "__main__":
    sys.exit(main())
