"""The Celery runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is Celery's own ``celery -A tasks worker`` with the prefork pool and one child, as its docs start
it; its settings are in tasks.py. The same runner serves Celery on RabbitMQ (ecosystem/celery/runner_rabbitmq
names this directory's runner.py with ``--transport amqp``): only the broker and the promises differ.

``inspect`` on Redis reads each task's state from Celery's result backend (``AsyncResult(task_id).state``, with
``task_track_started``), and for a task that backend calls ``PENDING`` or ``STARTED``, where kombu's Redis
transport holds its message: the queue's list, or the ``unacked`` hash whose index scores when it was delivered
(the transport options ``unacked_key``, ``unacked_index_key``, ``visibility_timeout``), which gives the hold's end.
On RabbitMQ there is no result backend and a queue's messages cannot be read without taking them: every job is
``unknown``, with that reason.

``schedule`` (the schedule workload, on Redis) runs the same worker and, in the one worker the harness names the
scheduler (``ALKSTORE_FAULTS_SCHEDULER=1``), a ``celery -A tasks beat`` process beside it in its process group:
Celery's periodic-tasks guide says to run a single beat, so one runs, and its replacement after it died. Its
schedule is ``beat_schedule`` with a tick every second, kept in the run's state directory (``--schedule``), where
a replacement finds when the tick last ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from alkstore_ecosystem_kit.runner_description import caveat, every_fault, promise

from alkstore_faults.runner_cli import Job, State, exec_console_script, serve

CONFIG = "https://docs.celeryq.dev/en/stable/userguide/configuration.html"
REDIS = "https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html"
KOMBU_REDIS = "https://docs.celeryq.dev/projects/kombu/en/stable/reference/kombu.transport.redis.html"
TASKS = "https://docs.celeryq.dev/en/stable/userguide/tasks.html"
RESULT = "https://docs.celeryq.dev/en/stable/reference/celery.result.html#celery.result.AsyncResult"
PERIODIC = "https://docs.celeryq.dev/en/stable/userguide/periodic-tasks.html"
SINGLE_BEAT = (
    "You have to ensure only a single scheduler is running for a schedule at a time, otherwise you’d end up "
    "with duplicate tasks."
)
SCHEDULE = {
    "every_s": 1,
    "schedulers": "one",
    "ticks": "interval",
    "grace_s": 5,
    "faults": ["kill9", "pause", "broker_restart_aof", "broker_restart_volatile", "net_cut"],
    "settings": [
        {"name": "beat_schedule", "value": "{'tick': {'task': 'tasks.tick', 'schedule': 1.0}}", "doc": PERIODIC},
        {"name": "celery beat", "value": "one process (and its replacement after it died)", "doc": PERIODIC},
        {"name": "celery beat --schedule", "value": "a file in the run's state directory", "doc": PERIODIC},
    ],
    "caveats": [caveat("tick_twice", ["*"], SINGLE_BEAT, PERIODIC)],
}
"""The schedule workload on Redis: one beat, as the periodic-tasks guide says; Celery promises nothing of a tick."""
VISIBILITY_TIMEOUT_S = 10
RESTORE_INTERVAL_S = 1
HEARTBEAT_S = 5
VISIBILITY = (
    "The visibility timeout defines the number of seconds to wait for the worker to acknowledge the task before the "
    "message is redelivered to another worker."
)
SETTINGS = [
    {"name": "task_acks_late", "value": True, "doc": CONFIG + "#task-acks-late"},
    {"name": "task_reject_on_worker_lost", "value": True, "doc": CONFIG + "#task-reject-on-worker-lost"},
    {"name": "worker_prefetch_multiplier", "value": 1, "doc": CONFIG + "#worker-prefetch-multiplier"},
    {"name": "celery worker --pool / --concurrency", "value": "prefork / 1", "doc": CONFIG + "#worker-concurrency"},
]
ACKS_LATE = promise(
    "lost",
    ["kill9", "startup", "pause", "net_cut", "slow_handler"],
    "A task message is not removed from the queue until that message has been acknowledged by a worker. A worker "
    "can reserve many messages in advance and even if the worker is killed \u2013 by power failure or some other "
    "reason \u2013 the message will be redelivered to another worker.",
    TASKS,
)
TWICE = caveat(
    "twice",
    ["*"],
    "Note: This means the task may be executed multiple times should the worker crash in the middle of execution.",
    TASKS + "#Task.acks_late",
)


def describe(transport: str) -> dict[str, object]:
    if transport == "redis":
        settings = [
            *SETTINGS,
            {"name": "broker_transport_options.visibility_timeout", "value": VISIBILITY_TIMEOUT_S, "doc": REDIS},
            {
                "name": "broker_transport_options.unacked_restore_interval",
                "value": RESTORE_INTERVAL_S,
                "doc": KOMBU_REDIS,
            },
            {"name": "broker_transport_options.unacked_restore_throttle", "value": 1, "doc": KOMBU_REDIS},
            {"name": "result_backend", "value": "the broker's Redis", "doc": REDIS + "#results"},
            {"name": "task_track_started", "value": True, "doc": CONFIG + "#task-track-started"},
        ]
        caveats = [TWICE, caveat("twice", ["slow_handler", "pause"], VISIBILITY, REDIS + "#visibility-timeout")]
        after_s = float(VISIBILITY_TIMEOUT_S + RESTORE_INTERVAL_S)
        recovery = {
            "state": "running",
            "after_s": after_s,
            "rule": f"a task not acknowledged within the visibility timeout ({VISIBILITY_TIMEOUT_S} s) is restored to "
            f"the queue by kombu's sweep (every {RESTORE_INTERVAL_S} s) and delivered to another worker",
            "quote": VISIBILITY,
            "doc": REDIS + "#visibility-timeout",
        }
        lease = float(VISIBILITY_TIMEOUT_S)
        faults = every_fault("redis")
    else:
        settings = [*SETTINGS, {"name": "broker_heartbeat", "value": HEARTBEAT_S, "doc": CONFIG + "#broker-heartbeat"}]
        caveats = [TWICE]
        after_s = float(2 * HEARTBEAT_S)
        recovery = {
            "state": "running",
            "after_s": after_s,
            "rule": f"a worker that misses two broker heartbeats ({HEARTBEAT_S} s each) loses its connection, and "
            "RabbitMQ delivers its unacknowledged message to another worker",
            "quote": ACKS_LATE["quote"],
            "doc": TASKS,
        }
        lease = float(2 * HEARTBEAT_S)
        faults = every_fault("amqp")
    return {
        "library": f"celery+{transport}",
        "version": f"celery {version('celery')}, kombu {version('kombu')}",
        "settings": settings,
        "lease_s": lease,
        "recovery_window_s": after_s + 20.0,
        "faults": faults,
        "promises": [ACKS_LATE],
        "caveats": caveats,
        "inspect_doc": RESULT,
        "policies": [],
        "recovery_rules": [recovery],
        **({"workloads": ["jobs", "schedule"], "schedule": SCHEDULE} if transport == "redis" else {}),
    }


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    for job in jobs:
        run_job.apply_async((job["id"], job["duration_s"], job["fail"]), task_id=job["id"])


def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as Celery's result backend and kombu's Redis transport hold it (docs/runtime-faults.md)."""
    from tasks import app

    blank: State = {"reason": None, "until": None, "held_by": None, "attempts": None}
    if app.conf.result_backend is None:
        reason = "no result backend (Celery's RabbitMQ setup documents none); AsyncResult says PENDING for any task"
        unread: State = {**blank, "state": "unknown", "library_state": None, "reason": reason}
        return [{"job": job["id"], **unread} for job in jobs]
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        client = channel.client
        queued = {_task_id(body) for body in client.lrange(app.conf.task_default_queue, 0, -1)}
        held = {}  # task id → when the visibility timeout lets kombu restore its message
        for tag, payload in client.hgetall(channel.unacked_key).items():
            delivered = client.zscore(channel.unacked_index_key, tag)
            lapses = None if delivered is None else delivered + channel.visibility_timeout
            held[_task_id(json.loads(payload)[0])] = lapses
    states = []
    for job in jobs:
        result = app.AsyncResult(job["id"])
        state: State = {"job": job["id"], **blank, "library_state": result.state}
        if result.state == "SUCCESS":
            state["state"] = "completed"
        elif result.state == "FAILURE":
            error = result.result
            state["state"] = "failed"
            state["reason"] = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        elif job["id"] in held:
            state["state"], state["until"] = "running", held[job["id"]]
            if result.state == "STARTED" and isinstance(result.info, dict):
                state["held_by"] = result.info.get("hostname")
        elif job["id"] in queued:
            state["state"] = "queued"
        else:
            state["state"] = "absent"
            state["reason"] = f"{result.state} in the result backend, and kombu holds no message for it"
        states.append(state)
    return states


def _task_id(message: bytes | str | dict[str, object]) -> object:
    """The task id in a message kombu's Redis transport stores (Celery's message protocol 2: ``headers.id``)."""
    body = json.loads(message) if isinstance(message, bytes | str) else message
    headers = body.get("headers")
    return headers.get("id") if isinstance(headers, dict) else None


def worker() -> None:
    name = f"{os.environ['ALKSTORE_FAULTS_WORKER']}@{os.environ['ALKSTORE_FAULTS_QUEUE']}"
    options = ["--pool", "prefork", "--concurrency", "1", "-n", name, "--loglevel", "INFO"]
    exec_console_script("celery", "-A", "tasks", "worker", *options, "--without-gossip", "--without-mingle")


def schedule() -> None:
    """The worker, and in the scheduler's worker a beat process beside it, in its process group."""
    if os.environ.get("ALKSTORE_FAULTS_SCHEDULER") == "1":
        beat = Path(sys.executable).parent / "celery"
        state = Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "celerybeat-schedule"
        subprocess.Popen([str(beat), "-A", "tasks", "beat", "--schedule", str(state), "--loglevel", "INFO"])
    worker()


def main() -> int:
    os.chdir(Path(__file__).resolve().parent)  # the celery_rabbitmq runner runs this file from its own directory
    arguments = sys.argv[1:]
    transport = "redis"
    if arguments[:2] == ["--transport", "amqp"]:
        transport, arguments = "amqp", arguments[2:]
    return serve(
        describe(transport),
        enqueue,
        worker,
        arguments,
        inspect=inspect,
        schedule=schedule if transport == "redis" else None,
    )


if __name__ == "__main__":
    sys.exit(main())
