"""The procrastinate runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect``.

The worker is procrastinate's own ``procrastinate --app=recovery.app worker`` command with one job at a time, and
the app carries the stalled-jobs recipe of procrastinate's production how-to (``recovery.py``): a periodic task
that retries the jobs of workers whose heartbeat is older than 30 s. ``--no-recovery`` before the subcommand is
the ``procrastinate-no-recovery`` variant (its own runner directory): the same runner without the recipe, what the
how-to says happens then. ``inspect`` reads each job through ``JobManager.list_jobs_async`` and, for a job in
``doing``, its worker's heartbeat in ``procrastinate_workers`` (the heartbeat the how-to describes).

``schedule`` (the schedule workload, the recipe runner only) is the same worker command on ``schedule.app``: the
recipe's app with a periodic task every second (``schedule.py``), which every worker defers, as the cron how-to
says to run periodic tasks.
"""

from __future__ import annotations

import os
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alkstore_ecosystem_kit.runner_description import Caveat, caveat, every_fault, promise

from alkstore_faults.runner_cli import NO_STATE, Job, State, exec_console_script, serve, states_of

HERE = Path(__file__).resolve().parent
DOCS = "https://procrastinate.readthedocs.io/en/stable/"
STALLED = DOCS + "howto/production/retry_stalled_jobs.html"
WORKER = DOCS + "howto/basics/worker.html"
REFERENCE = DOCS + "reference.html"
BLUEPRINTS = "procrastinate/blueprints.py (procrastinate 3.10.0), Blueprint.periodic"
MANAGER = "procrastinate/manager.py (procrastinate 3.10.0), JobManager.get_stalled_jobs"
SECONDS_SINCE_HEARTBEAT = 30.0  # get_stalled_jobs' default, the how-to's "(by default) 30 seconds"
PERIOD_S = 5  # recovery.PERIOD_S: recovery.py imports the app, which needs a broker, so describe cannot import it
NO_RECOVERY = "--no-recovery"
CRON_DOC = "https://github.com/procrastinate-org/procrastinate/blob/main/docs/howto/cron.md"
ONCE = "the database is responsible for making sure deferring only happens once per period, even with multiple workers."
UP = "as long as at least one worker is up, the tasks will be deferred."
NO_WORKER = "If there is no worker running, then periodic tasks will not get scheduled."
SCHEDULE = {
    "every_s": 1,
    "schedulers": "every",
    "grace_s": 5,
    "faults": ["kill9", "pause", "broker_restart", "net_cut"],
    "settings": [
        {"name": "@app.periodic(cron=...)", "value": "* * * * * * (every second)", "doc": CRON_DOC},
        {"name": "procrastinate worker", "value": "three, each deferring the periodic task", "doc": CRON_DOC},
    ],
    "skips": [{"when": "scheduler_down", "quote": NO_WORKER, "doc": CRON_DOC}],
    "promises": [
        promise("tick_twice", ["*"], ONCE, CRON_DOC),
        promise("tick_missed", ["kill9", "pause"], UP, CRON_DOC),
    ],
}
"""The schedule workload: what the cron how-to says of periodic tasks under several workers."""
LIBRARY_STATES = {"succeeded": "completed", "failed": "failed", "cancelled": "dead", "aborted": "failed"}


def description(recipe: bool) -> dict[str, Any]:
    settings: list[dict[str, Any]] = [
        {"name": "procrastinate worker --concurrency", "value": 1, "doc": WORKER},
        {"name": "PsycopgConnector(conninfo=...)", "value": "the throwaway cluster", "doc": WORKER},
        {
            "name": "Worker(update_heartbeat_interval=..., stalled_worker_timeout=...)",
            "value": "10, 30 (defaults)",
            "doc": STALLED,
        },
    ]
    rules: list[dict[str, Any]] = []
    caveats: list[Caveat] = []
    if recipe:
        settings += [
            {
                "name": "retry_stalled_jobs: @app.periodic + get_stalled_jobs() + retry_job(job)",
                "value": "installed",
                "doc": STALLED,
            },
            {
                "name": "retry_stalled_jobs: @app.periodic(cron=...)",
                "value": f"* * * * * */{PERIOD_S} (every "
                f"{PERIOD_S} s; the how-to's example is every 10th minute, longer than a run)",
                "doc": BLUEPRINTS,
            },
            {"name": "get_stalled_jobs(seconds_since_heartbeat=...)", "value": SECONDS_SINCE_HEARTBEAT, "doc": MANAGER},
        ]
        rules.append(
            {
                "state": "running",
                "after_s": SECONDS_SINCE_HEARTBEAT + PERIOD_S,
                "rule": f"a job in doing whose worker sent no heartbeat for {SECONDS_SINCE_HEARTBEAT:.0f} s is "
                f"retried by the retry_stalled_jobs periodic task (every {PERIOD_S} s here)",
                "quote": "Those stalled jobs can then be retried for example by a periodic task.",
                "doc": STALLED,
            }
        )
    else:
        caveats.append(
            caveat(
                "lost",
                ["kill9", "startup"],
                "if no specific action is taken, these stalled jobs will remain in the queue forever, and their "
                "execution will never resume.",
                STALLED,
            )
        )
    described: dict[str, Any] = {
        "library": "procrastinate",
        "version": version("procrastinate"),
        "settings": settings,
        "lease_s": 10.0,  # update_heartbeat_interval: the worker's proof of life
        # The recipe's rule: the last heartbeat (at most the kill) + 30 s + one period of the periodic task. Without
        # the recipe no rule runs the job again; the window stays the recipe's so both runners are judged alike.
        "recovery_window_s": SECONDS_SINCE_HEARTBEAT + PERIOD_S,
        # The variant differs only in the recipe, which acts on the jobs of a worker that stopped sending
        # heartbeats while its process is gone: kill9 and startup (in the recipe runner's runs of the other faults
        # it retried no job).
        "faults": every_fault("postgres") if recipe else ["kill9", "startup"],
        "promises": [],
        "caveats": caveats,
        "inspect_doc": REFERENCE + "#procrastinate.manager.JobManager.list_jobs_async",
        "policies": [],
        "recovery_rules": rules,
    }
    if recipe:
        described["workloads"] = ["jobs", "schedule"]
        described["schedule"] = SCHEDULE
    else:
        described["variant_of"] = "procrastinate"
        described["left_out"] = (
            "the stalled-jobs recipe of procrastinate's production how-to (Retry stalled jobs): no periodic task "
            "retries the jobs of a worker that stopped sending heartbeats"
        )
    return described


def enqueue(jobs: list[Job]) -> None:
    from tasks import app, run_job

    with app.open():
        app.schema_manager.apply_schema()
        for job in jobs:
            run_job.defer(job=job["id"], duration_s=job["duration_s"], fail=job["fail"])


def worker(recipe: bool) -> None:
    # Its console script does not put the app's directory on the path; a variant runs from a directory of its own.
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
    app = "--app=recovery.app" if recipe else "--app=tasks.app"
    exec_console_script("procrastinate", app, "worker", "--concurrency", "1", "--queues", queue, env=env)


def schedule() -> None:
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    queue = os.environ["ALKSTORE_FAULTS_QUEUE"]
    exec_console_script(
        "procrastinate", "--app=schedule.app", "worker", "--concurrency", "1", "--queues", queue, env=env
    )


def state_of(job: Any, beats: dict[int, float], recipe: bool, now: float) -> State:
    """What one ``procrastinate.jobs.Job`` (its ``status``, ``worker_id``, ``attempts``) says in protocol v2."""
    status = str(job.status)
    state: State = {**NO_STATE, "state": "unknown", "library_state": status, "attempts": job.attempts}
    if status == "todo":
        scheduled = job.scheduled_at.timestamp() if job.scheduled_at is not None else None
        state["state"] = "scheduled" if scheduled is not None and scheduled > now else "queued"
        state["until"] = scheduled if state["state"] == "scheduled" else None
    elif status == "doing":
        state["state"] = "running"
        state["held_by"] = None if job.worker_id is None else str(job.worker_id)
        if recipe:  # stalled once its worker's heartbeat is 30 s old (or the worker was pruned), then one period
            stalled_at = beats.get(job.worker_id, now - SECONDS_SINCE_HEARTBEAT) + SECONDS_SINCE_HEARTBEAT
            state["until"] = max(stalled_at, now) + PERIOD_S
    elif status in LIBRARY_STATES:
        state["state"] = LIBRARY_STATES[status]
        state["reason"] = status if state["state"] != "completed" else None
    else:
        state["reason"] = f"procrastinate status {status!r} has no protocol state"
    return state


async def inspect(jobs: list[Job], recipe: bool) -> list[State]:
    from tasks import app

    async with app.open_async():
        found = await app.job_manager.list_jobs_async(queue=os.environ["ALKSTORE_FAULTS_QUEUE"], task="run_job")
        rows = await app.connector.execute_query_all_async(
            "SELECT id, extract(epoch FROM last_heartbeat)::float8 AS beat FROM procrastinate_workers"
        )
    beats = {int(row["id"]): float(row["beat"]) for row in rows}
    by_id = {str(job.task_kwargs.get("job")): job for job in found}
    now = time.time()
    return states_of(jobs, by_id, lambda held: state_of(held, beats, recipe, now))


def main(argv: list[str]) -> int:
    recipe = argv[:1] != [NO_RECOVERY]
    arguments = argv if recipe else argv[1:]
    return serve(
        description(recipe),
        enqueue,
        lambda: worker(recipe),
        argv=arguments,
        inspect=lambda jobs: inspect(jobs, recipe),
        schedule=schedule if recipe else None,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
