"""The huey runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is huey's own consumer, ``huey_consumer tasks.huey``, as huey's docs start it, with one worker
thread, and the ``SIGNAL_INTERRUPTED`` handler huey's production page prescribes (tasks.py). huey is the control
of the matrix: its production page says a task interrupted by ``SIGKILL`` is lost, and huey keeps no record of
a task it runs, so ``inspect`` finds such a task nowhere.

huey assigns its own task ids: ``enqueue`` keeps the harness's id → huey's id map in the run's state directory
(``ALKSTORE_FAULTS_STATE``), and ``inspect`` reads each task's stored result (``Huey.result``), the queue
(``Huey.pending``) and the schedule (``Huey.scheduled``), all documented ``Huey`` methods.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC
from importlib.metadata import version
from pathlib import Path

from alkstore_ecosystem_kit.runner_description import caveat, every_fault

from alkstore_faults.runner_cli import NO_STATE, Job, State, exec_console_script, serve, states_of

GUIDE = "https://huey.readthedocs.io/en/latest/guide.html"
CONSUMER = "https://huey.readthedocs.io/en/latest/consumer.html"
DEPLOYMENT = "https://huey.readthedocs.io/en/latest/deployment.html"
API = "https://huey.readthedocs.io/en/latest/api.html"
DESCRIPTION = {
    "library": "huey",
    "version": version("huey"),
    "settings": [
        {"name": "RedisHuey(url=...)", "value": "the throwaway broker", "doc": GUIDE},
        {"name": "huey_consumer --workers", "value": 1, "doc": CONSUMER},
        {"name": "huey_consumer --worker-type", "value": "thread", "doc": CONSUMER},
        {"name": "@huey.signal(SIGNAL_INTERRUPTED): huey.enqueue(task)", "value": "on", "doc": DEPLOYMENT},
    ],
    "lease_s": 3.0,
    # huey documents no rule that runs an interrupted task again (recovery_rules is empty): the window only gives a
    # run that ended just after the fault the time to show, and nothing is expected to come back in it.
    "recovery_window_s": 5.0,
    "faults": every_fault("redis"),
    "inspect_doc": API,
    "promises": [],
    "caveats": [
        caveat(
            "lost",
            ["kill9", "startup"],
            "A task interrupted by SIGKILL (or a power loss) is lost.",
            DEPLOYMENT + "#shutdown-signals",
        )
    ],
    "policies": [],
    "recovery_rules": [],
}


def _ids_file() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "huey-task-ids.json"


def enqueue(jobs: list[Job]) -> None:
    from tasks import run_job

    ids = json.loads(_ids_file().read_text()) if _ids_file().exists() else {}
    for job in jobs:
        ids[job["id"]] = run_job(job["id"], job["duration_s"], job["fail"]).id
    _ids_file().write_text(json.dumps(ids))


def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as huey's result store, queue and schedule hold it (docs/runtime-faults.md, inspect)."""
    from huey.exceptions import TaskException
    from tasks import huey

    ids = json.loads(_ids_file().read_text())
    pending = {task.id for task in huey.pending()}
    scheduled = {task.id: task.eta for task in huey.scheduled()}

    def state_of(task_id: str) -> State:
        state: State = dict(NO_STATE)
        try:
            result = huey.result(task_id, preserve=True)
        except TaskException as error:
            return {**state, "state": "failed", "library_state": "error in result store", "reason": str(error)}
        if result is not None:
            state["state"], state["library_state"] = "completed", "result in result store"
        elif task_id in pending:
            state["state"], state["library_state"] = "queued", "pending"
        elif task_id in scheduled:
            eta = scheduled[task_id]
            state["state"], state["library_state"] = "scheduled", "scheduled"
            state["until"] = None if eta is None else eta.replace(tzinfo=UTC).timestamp()  # huey keeps UTC
        else:
            state["state"], state["library_state"] = "absent", "no result, not pending, not scheduled"
        return state

    return states_of(jobs, ids, state_of)


def worker() -> None:
    exec_console_script("huey_consumer", "tasks.huey", "--workers", "1", "--worker-type", "thread")


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
