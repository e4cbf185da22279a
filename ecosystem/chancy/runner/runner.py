"""The chancy runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The worker is chancy's documented run call, ``async with Worker(chancy) as worker: await
worker.wait_for_shutdown()`` (chancy/worker.py), on an app with chancy's default production plugins
(Leadership, Recovery, Pruner; ``app.py``), one job at a time in chancy's default process executor, each job
with a time limit and three attempts. A worker whose heartbeat stops is found by the leader's Recovery plugin,
which puts its running jobs back to ``pending``; that is the rule a killed worker's job waits for.

chancy gives every job its own UUID: ``enqueue`` keeps the harness's ids' map in ``ids.json``, and ``inspect``
reads each job with ``Chancy.get_jobs`` and, for a job in ``running``, the worker holding it and that worker's
heartbeat in ``chancy_jobs`` / ``chancy_workers``, the tables the Recovery plugin reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alkstore_ecosystem_kit.runner_description import caveat, every_fault, promise

from alkstore_faults.runner_cli import NO_STATE, Job, State, serve, states_of

# isort: split
# After runner_cli, whose hook turns a missing chancy into one line naming it; tasks imports chancy.
import tasks as settings

PACKAGE = f"chancy {version('chancy')}"
WORKER = f"chancy/worker.py ({PACKAGE}): Worker"
RECOVERY = f"chancy/plugins/recovery.py ({PACKAGE}): Recovery"
LEADERSHIP = f"chancy/plugins/leadership.py ({PACKAGE}): Leadership"
PRUNER = f"chancy/plugins/pruner.py ({PACKAGE}): Pruner"
JOB = f"chancy/job.py ({PACKAGE}): Job"
QUEUE = f"chancy/queue.py ({PACKAGE}): Queue"
APP = f"chancy/app.py ({PACKAGE}): Chancy.get_jobs"
EXECUTOR = f"chancy/executors/process.py ({PACKAGE}): ProcessExecutor"
RECOVERY_AFTER_S = float(
    settings.HEARTBEAT_TIMEOUT_S
    + settings.RECOVERY_POLL_S
    + settings.LEADERSHIP_TIMEOUT_S  # a dead leader's row expires before the other worker is elected
    + settings.LEADERSHIP_POLL_S
)
"""A killed worker's job: its heartbeat times out, then the leader's next Recovery poll; a dead leader's
lease lapses first and the other worker takes it at its next poll."""
RECOVERS = (
    "Recovers jobs that appear to be abandoned by a worker. [...] Typically, this happens when a worker is "
    "unexpectedly terminated, or has otherwise been lost which we recognize by checking the last seen timestamp of "
    "the worker heartbeat."
)
PENDING = (
    'This will transition any matching jobs back to the "pending" state, and increment the `max_attempts` counter '
    "by 1 to allow it to be retried."
)
NO_WAIT = (
    "Recovery invalidates the old execution's claim and requests best-effort cancellation of that execution. It "
    "does not wait for acknowledgement: the old worker may be unreachable, and cancellation may be unsupported."
)

DESCRIPTION: dict[str, Any] = {
    "library": "chancy",
    "version": version("chancy"),
    "settings": [
        {"name": "Worker(chancy) / wait_for_shutdown()", "value": "one worker per process", "doc": WORKER},
        {"name": "Worker(heartbeat_poll_interval=...)", "value": settings.HEARTBEAT_POLL_S, "doc": WORKER},
        {"name": "Worker(heartbeat_timeout=...)", "value": settings.HEARTBEAT_TIMEOUT_S, "doc": WORKER},
        {
            "name": "Leadership(poll_interval=..., timeout=...)",
            "value": f"{settings.LEADERSHIP_POLL_S}, {settings.LEADERSHIP_TIMEOUT_S}",
            "doc": LEADERSHIP,
        },
        {"name": "Recovery(poll_interval=...)", "value": settings.RECOVERY_POLL_S, "doc": RECOVERY},
        {"name": "Pruner(poll_interval=...)", "value": settings.PRUNER_POLL_S, "doc": PRUNER},
        {"name": "Queue(concurrency=...)", "value": settings.CONCURRENCY, "doc": QUEUE},
        {"name": "Queue(executor=...)", "value": "chancy.executors.process.ProcessExecutor (default)", "doc": QUEUE},
        {"name": "Queue(eager_polling=...)", "value": True, "doc": QUEUE},
        {"name": "Job(max_attempts=...)", "value": settings.MAX_ATTEMPTS, "doc": JOB},
        {"name": "Job(limits=[Limit(Limit.Type.TIME, ...)])", "value": settings.TIME_LIMIT_S, "doc": EXECUTOR},
    ],
    # A live worker's claim never lapses: only its heartbeat, older than heartbeat_timeout, lets Recovery take it.
    "lease_s": float(settings.HEARTBEAT_TIMEOUT_S),
    "recovery_window_s": RECOVERY_AFTER_S + 10.0,
    "faults": every_fault("postgres"),
    "promises": [promise("lost", ["kill9", "startup", "pause", "broker_restart", "net_cut"], RECOVERS, RECOVERY)],
    "caveats": [
        caveat("twice", ["pause", "net_cut", "broker_restart"], NO_WAIT, RECOVERY),
        caveat("concurrent", ["pause", "net_cut", "broker_restart"], NO_WAIT, RECOVERY),
    ],
    "inspect_doc": APP,
    "policies": [
        {
            "state": "failed",
            "reason": "TimeoutError",
            "setting": "Job(limits=[Limit(Limit.Type.TIME, ...)])",
            "quote": "A limit that can be applied to a job.",
            "doc": JOB,
        },
        {
            "state": "failed",
            "reason": "attempts exhausted",
            "setting": "Job(max_attempts=...)",
            "quote": "The maximum number of times this job can be attempted before it is considered failed.",
            "doc": JOB,
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": RECOVERY_AFTER_S,
            "rule": f"a running job whose worker sent no heartbeat for {settings.HEARTBEAT_TIMEOUT_S} s goes back to "
            f"pending at the leader's next Recovery poll (every {settings.RECOVERY_POLL_S} s)",
            "quote": PENDING,
            "doc": RECOVERY,
        },
        {
            "state": "scheduled",
            "after_s": None,
            "rule": "a job waiting to be retried (retrying) runs again once its scheduled time has come",
            "quote": "The maximum number of times this job can be attempted before it is considered failed.",
            "doc": JOB,
        },
    ],
}


def _ids_file() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "ids.json"


async def enqueue(jobs: list[Job]) -> None:
    chancy = settings.application()
    async with chancy:
        await chancy.migrate()
        await chancy.declare(settings.queue(), upsert=True)
        ids: dict[str, str] = {}
        for job in jobs:
            reference = await chancy.push(settings.job_of(job["id"], job["duration_s"], job["fail"]))
            ids[job["id"]] = str(reference.identifier)
    _ids_file().write_text(json.dumps(ids), encoding="utf-8")


async def _work() -> None:
    from chancy import Worker

    chancy = settings.application()
    async with (
        chancy,
        Worker(
            chancy,
            heartbeat_poll_interval=settings.HEARTBEAT_POLL_S,
            heartbeat_timeout=settings.HEARTBEAT_TIMEOUT_S,
        ) as worker,
    ):
        await worker.wait_for_shutdown()


def worker() -> None:
    asyncio.run(_work())


def _reason(errors: list[dict[str, Any]]) -> str | None:
    """The last line of the last recorded traceback: the exception chancy recorded."""
    if not errors:
        return None
    lines = [line for line in str(errors[-1].get("traceback", "")).splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


def state_of(found: Any, holder: tuple[str | None, float | None], now: float) -> State:
    """What one ``QueuedJob`` (its ``state``, ``attempts``, ``max_attempts``, ``errors``) says in protocol v2;
    ``holder``: the worker in ``taken_by`` and that worker's last heartbeat (epoch seconds), if it has one."""
    status = str(found.state.value)
    state: State = {**NO_STATE, "state": "unknown", "library_state": status, "attempts": found.attempts}
    scheduled = found.scheduled_at.timestamp() if found.scheduled_at is not None else None
    if status in ("pending", "retrying"):
        if found.attempts >= found.max_attempts:
            state["state"], state["reason"] = "failed", "attempts exhausted"
        elif scheduled is not None and scheduled > now:
            state["state"], state["until"] = "scheduled", scheduled
        else:
            state["state"] = "queued"
    elif status == "running":
        taken_by, last_seen = holder
        state["state"], state["held_by"] = "running", taken_by
        seen = last_seen if last_seen is not None else now - settings.HEARTBEAT_TIMEOUT_S
        state["until"] = max(seen + settings.HEARTBEAT_TIMEOUT_S, now) + RECOVERY_AFTER_S - settings.HEARTBEAT_TIMEOUT_S
    elif status == "succeeded":
        state["state"] = "completed"
    elif status == "failed":
        state["state"], state["reason"] = "failed", _reason(found.errors) or "failed"
    else:
        state["reason"] = f"chancy state {status!r} has no protocol state"
    return state


async def inspect(jobs: list[Job]) -> list[State]:
    from chancy import Reference

    ids: dict[str, str] = json.loads(_ids_file().read_text(encoding="utf-8"))
    chancy = settings.application()
    async with chancy, chancy.pool.connection() as conn:
        found = {str(job.id): job for job in await chancy.get_jobs([Reference(ident) for ident in ids.values()])}
        cursor = await conn.execute(
            f"SELECT j.id::text, j.taken_by, extract(epoch FROM w.last_seen)::float8 FROM {chancy.prefix}jobs j "
            f"LEFT JOIN {chancy.prefix}workers w ON w.worker_id = j.taken_by"
        )
        holders = {str(row[0]): (row[1], row[2]) for row in await cursor.fetchall()}
    now = time.time()
    by_job = {harness_id: found[ident] for harness_id, ident in ids.items() if ident in found}
    return states_of(jobs, by_job, lambda held: state_of(held, holders.get(str(held.id), (None, None)), now))


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
