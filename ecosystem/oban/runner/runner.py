"""The oban runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

oban is the Python package of Oban (oban-bg/oban-py), on Oban's own Postgres schema (``oban_jobs``). The worker is
``oban start``, the command its "Ready for Production" guide recommends ("If you're using `oban start` to run
your workers, you're already production-ready"), with ``oban.toml`` beside this file: the Lifeline (orphan rescue)
and the stager on, as they are by default, the Lifeline's ``rescue_after`` shortened from its default of 300 s
so a killed worker's job is rescued within a run; one queue of limit 1 per worker ("Defining Queues").

oban's Lifeline runs on the elected leader only, and rescues by time alone: a job ``executing`` whose
``attempted_at`` is older than ``rescue_after`` goes back to ``available``. The leader's lease is oban's fixed
30 s (``oban/_leader.py``, not configurable through ``oban start``); a non-leader stands for election every 30 s.
A killed leader's jobs therefore wait up to that lease and that period before the other worker rescues them.

oban gives every job an integer id: ``enqueue`` keeps the harness's ids' map in ``ids.json``; ``inspect`` reads
each job with ``Oban.get_job``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alkstore_ecosystem_kit.runner_description import every_fault, promise

from alkstore_faults.runner_cli import NO_STATE, Job, State, exec_console_script, serve, states_of

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "oban.toml"
SETTINGS: dict[str, Any] = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
RESCUE_AFTER_S = float(SETTINGS["lifeline"]["rescue_after"])
LIFELINE_S = float(SETTINGS["lifeline"]["interval"])
LEADER_S = 30.0
"""oban/_leader.py: ``Leader(interval=30.0)``, the lease's ttl; a non-leader stands again every interval."""
QUEUE_LIMIT = 1
MAX_ATTEMPTS = 3  # tasks.MAX_ATTEMPTS: tasks imports oban, which describe does not need
TIMEOUT_S = 30.0  # tasks.TIMEOUT_S
PACKAGE = "oban 0.7.0"
REPOSITORY = "https://github.com/oban-bg/oban-py/blob/"
PRODUCTION = REPOSITORY + "182a22334b872af8d8af309f7159dafa25649f93/docs/production.md"
QUEUES = REPOSITORY + "17f9f0a71e461d8adca82fb9b79dbb01df0d9ad7/docs/defining_queues.md"
WRITING = REPOSITORY + "67217a07af81082bdab178c904c2ba2684d97c67/docs/writing_jobs.md"
README = "https://pypi.org/project/oban/0.7.0/"
OBAN = f"oban/oban.py ({PACKAGE}): Oban.__init__"
LIFELINE = f"oban/_lifeline.py ({PACKAGE}): Lifeline"
WORKER = f"oban/worker.py ({PACKAGE}): Worker.timeout"
GET_JOB = f"oban/oban.py ({PACKAGE}): Oban.get_job"
RECOVERY_AFTER_S = RESCUE_AFTER_S + 2 * LEADER_S + LIFELINE_S
"""A killed worker's job: executing for rescue_after, then the Lifeline of a leader; a killed leader's lease
lapses (30 s) and the other worker stands at its next election (every 30 s) first."""
ORPHAN_RESCUE = "Orphan Rescue: Recovers jobs interrupted by crashes or deployments"
NOT_LOST = (
    "You can leave your application running indefinitely without worrying about jobs being lost or orphaned due to "
    "crashes."
)
RETRIES = "When a worker raises an exception, Oban automatically retries the job (up to `max_attempts`)."
TIMEOUT = "The job then fails with a `JobTimeoutError` and is retried according to the usual backoff."

DESCRIPTION: dict[str, Any] = {
    "library": "oban",
    "version": version("oban"),
    "settings": [
        {"name": "oban start --config oban.toml", "value": "one Oban node per worker process", "doc": PRODUCTION},
        {"name": "oban start --queues QUEUE:LIMIT", "value": QUEUE_LIMIT, "doc": QUEUES},
        {"name": "oban.toml [lifeline] interval", "value": LIFELINE_S, "doc": OBAN},
        {"name": "oban.toml [lifeline] rescue_after", "value": RESCUE_AFTER_S, "doc": LIFELINE},
        {"name": "oban.toml [stager] interval", "value": float(SETTINGS["stager"]["interval"]), "doc": OBAN},
        {"name": "oban.toml [pruner] max_age", "value": int(SETTINGS["pruner"]["max_age"]), "doc": PRODUCTION},
        {"name": "oban.toml shutdown_grace_period", "value": float(SETTINGS["shutdown_grace_period"]), "doc": OBAN},
        {"name": "@worker(max_attempts=...)", "value": MAX_ATTEMPTS, "doc": WRITING},
        {"name": "RunJob.timeout()", "value": TIMEOUT_S, "doc": WORKER},
    ],
    # A live worker's claim has no heartbeat: the Lifeline rescues any job executing longer than rescue_after.
    "lease_s": RESCUE_AFTER_S,
    "recovery_window_s": RECOVERY_AFTER_S + 10.0,
    "faults": every_fault("postgres"),
    "promises": [
        promise("lost", ["kill9", "startup", "pause", "broker_restart", "net_cut"], ORPHAN_RESCUE, PRODUCTION),
        promise("lost", ["kill9", "startup", "pause", "broker_restart", "net_cut"], NOT_LOST, README),
    ],
    "caveats": [],
    "inspect_doc": GET_JOB,
    "policies": [
        {"state": "dead", "reason": "JobTimeoutError", "setting": "RunJob.timeout()", "quote": TIMEOUT, "doc": WORKER},
        {
            "state": "dead",
            "reason": "JobFailed",
            "setting": "@worker(max_attempts=...)",
            "quote": RETRIES,
            "doc": WRITING,
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": RECOVERY_AFTER_S,
            "rule": f"a job executing for longer than rescue_after ({RESCUE_AFTER_S:.0f} s) goes back to available at "
            f"the leader's next Lifeline pass (every {LIFELINE_S:.0f} s); a killed leader's lease lapses first",
            "quote": ORPHAN_RESCUE,
            "doc": PRODUCTION,
        },
        {
            "state": "scheduled",
            "after_s": None,
            "rule": "a retryable or scheduled job becomes available at its scheduled_at (the stager, every second)",
            "quote": RETRIES,
            "doc": WRITING,
        },
    ],
}


def _broker() -> str:
    return os.environ.get("ALKSTORE_FAULTS_BROKER") or "postgresql://"


def _ids_file() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "ids.json"


async def enqueue(jobs: list[Job]) -> None:
    from oban import Oban
    from oban.schema import install
    from tasks import RunJob

    pool = await Oban.create_pool(_broker())
    try:
        await install(pool)
        ids: dict[str, int] = {}
        async with Oban(pool=pool) as oban:
            for job in jobs:
                args = {"job": job["id"], "duration_s": job["duration_s"], "fail": job["fail"]}
                inserted = await oban.enqueue(RunJob.new(args))
                ids[job["id"]] = int(inserted.id)
    finally:
        await pool.close()
    _ids_file().write_text(json.dumps(ids), encoding="utf-8")


def worker() -> None:
    # oban start imports a worker class by its module's name: this directory on the path, as a user's app is.
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
    exec_console_script(
        "oban", "start", "--config", str(CONFIG), "--dsn", _broker(), "--queues", f"{queue}:{QUEUE_LIMIT}", env=env
    )


def _epoch(moment: Any) -> float | None:
    return None if moment is None else float(moment.timestamp())


def _reason(errors: list[Any]) -> str | None:
    """The last recorded error (``{"attempt", "at", "error"}``, "Writing Jobs"), as oban stored it."""
    if not errors:
        return None
    last = errors[-1]
    return str(last.get("error") if isinstance(last, dict) else last)


def state_of(found: Any, now: float) -> State:
    """What one oban ``Job`` (its ``state``, ``attempt``, ``attempted_at``, ``scheduled_at``) says in protocol v2."""
    status = str(getattr(found.state, "value", found.state))
    state: State = {**NO_STATE, "state": "unknown", "library_state": status, "attempts": found.attempt}
    if status == "available":
        state["state"] = "queued"
    elif status in ("scheduled", "retryable"):
        until = _epoch(found.scheduled_at)
        state["state"], state["until"] = ("scheduled", until) if until is not None and until > now else ("queued", None)
    elif status == "executing":
        attempted = _epoch(found.attempted_at) or now
        state["state"] = "running"
        state["held_by"] = found.attempted_by[-1] if found.attempted_by else None
        state["until"] = max(attempted + RESCUE_AFTER_S, now) + RECOVERY_AFTER_S - RESCUE_AFTER_S
    elif status == "completed":
        state["state"] = "completed"
    elif status in ("discarded", "cancelled"):
        state["state"], state["reason"] = "dead", _reason(found.errors) or status
    else:
        state["reason"] = f"oban state {status!r} has no protocol state"
    return state


async def inspect(jobs: list[Job]) -> list[State]:
    from oban import Oban

    ids: dict[str, int] = json.loads(_ids_file().read_text(encoding="utf-8"))
    pool = await Oban.create_pool(_broker())
    found: dict[str, Any] = {}
    try:
        async with Oban(pool=pool) as oban:
            for harness_id, oban_id in ids.items():
                found[harness_id] = await oban.get_job(oban_id)
    finally:
        await pool.close()
    now = time.time()
    return states_of(jobs, found, lambda held: state_of(held, now))


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
