"""The pgqueuer runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect``.

The worker is pgqueuer's ``PgQueuer.run`` with a 5 s ``heartbeat_timeout``, after which a picked job whose
heartbeat stopped is picked again by another worker, at most two jobs at a time (pgqueuer's smallest cap on one
worker: ``max_concurrent_tasks`` at least twice ``batch_size``; the entrypoint's ``concurrency_limit`` would hold
across all workers, so ``1`` would run the three workers as one). Its CLI (``pgq run``) is the documented
way, but pgqueuer 1.6.0's ``--log-level`` option hands a string where it wants an enum under the typer this
venv resolves (``AttributeError: 'str' object has no attribute 'name'``), so the runner makes the call the CLI
makes. The client installs pgqueuer's schema on the throwaway cluster before it enqueues, and keeps the ids
pgqueuer gives the jobs in ``ALKSTORE_FAULTS_STATE``. ``inspect`` reads a job's row in the queue table (a job
still queued or picked, with its heartbeat) and, once pgqueuer removed it from there, its last status in the log
table (``Queries.job_status``) with the exception the log recorded.
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

from alkstore_ecosystem_kit.runner_description import every_fault, promise

from alkstore_faults.runner_cli import NO_STATE, Job, State, serve

CLI_HELP = "pgqueuer/adapters/cli/cli.py (pgqueuer 1.6.0): pgq run --help, --heartbeat-timeout"
RUN_DOC = "pgqueuer/core/qm.py (pgqueuer 1.6.0): QueueManager.run"
ENTRYPOINT_DOC = "pgqueuer/core/qm.py (pgqueuer 1.6.0): QueueManager.entrypoint"
QUERIES_DOC = "pgqueuer/adapters/persistence/queries.py (pgqueuer 1.6.0): Queries.job_status"
IDS = "pgqueuer_ids.json"
# The log's statuses (pgqueuer.domain.types.JOB_STATUS) of a job no longer in the queue table.
LOGGED = {"successful": "completed", "exception": "failed", "failed": "failed", "canceled": "dead", "deleted": "absent"}
HEARTBEAT_TIMEOUT_S = 5
# An idle worker waits for a notification of a new job at most this long before it asks again: a job whose
# heartbeat stopped is re-picked only when a worker asks (no notification says so), so the default, 30 s, would
# leave it waiting past the recovery window.
DEQUEUE_TIMEOUT_S = 5
DESCRIPTION = {
    "library": "pgqueuer",
    "version": version("pgqueuer"),
    "settings": [
        # Each names the line of the installed package's own docs that says what the value does.
        {"name": "PgQueuer.run(heartbeat_timeout=...)", "value": HEARTBEAT_TIMEOUT_S, "doc": CLI_HELP},
        {
            "name": "PgQueuer.run(dequeue_timeout=...)",
            "value": DEQUEUE_TIMEOUT_S,
            "doc": "pgqueuer/adapters/cli/cli.py (pgqueuer 1.6.0): pgq run --help, --dequeue-timeout: Max seconds to "
            "wait for new jobs.",
        },
        {
            "name": "PgQueuer.run(max_concurrent_tasks=..., batch_size=...)",
            "value": "2, 1 (max_concurrent_tasks must be at least twice the batch size)",
            "doc": RUN_DOC + ": ``max_concurrent_tasks`` is a hard cap on this worker's picked jobs",
        },
        {
            "name": "entrypoint(concurrency_limit=...)",
            "value": "0 (the default; a limit holds across all workers: 1 would run one job at a time in all)",
            "doc": ENTRYPOINT_DOC + ": ``concurrency_limit=0`` means unlimited; ``1`` serialises dispatch. Limits "
            "are enforced at the database level across all workers.",
        },
    ],
    "lease_s": float(HEARTBEAT_TIMEOUT_S),
    # The heartbeat rule (recovery_rules): a picked job whose heartbeat is 5 s old is picked again by the next
    # worker that asks, within a dequeue_timeout (5 s); the rest is the start of its run on a loaded machine.
    "recovery_window_s": 20.0,
    "faults": every_fault("postgres"),
    "promises": [
        promise(
            "lost",
            ["kill9", "startup"],
            "Seconds without a heartbeat before a job is re-picked by another worker.",
            CLI_HELP,
        )
    ],
    "caveats": [],
    "inspect_doc": QUERIES_DOC,
    "policies": [],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(HEARTBEAT_TIMEOUT_S),
            "rule": f"a picked job whose heartbeat is {HEARTBEAT_TIMEOUT_S} s old is picked again by another worker",
            "quote": "``heartbeat_timeout`` is the staleness threshold for re-picking a job;",
            "doc": RUN_DOC,
        }
    ],
}


async def enqueue(jobs: list[Job]) -> None:
    import asyncpg
    from pgqueuer import AsyncpgDriver
    from pgqueuer.queries import Queries

    connection = await asyncpg.connect(os.environ["ALKSTORE_FAULTS_BROKER"])
    try:
        queries = Queries(AsyncpgDriver(connection))
        await queries.install()
        ids = await queries.enqueue(
            ["run_job"] * len(jobs), [json.dumps(job).encode() for job in jobs], [0] * len(jobs)
        )
    finally:
        await connection.close()
    state = Path(os.environ["ALKSTORE_FAULTS_STATE"]) / IDS
    state.write_text(json.dumps({job["id"]: int(id_) for job, id_ in zip(jobs, ids, strict=True)}), encoding="utf-8")


def queued_state(row: Any, now: float) -> State:
    """A job still in pgqueuer's queue table: queued (or not before ``execute_after``) or picked, with its
    heartbeat, re-picked once the heartbeat is ``HEARTBEAT_TIMEOUT_S`` old."""
    status = str(row["status"])
    state: State = {**NO_STATE, "state": "unknown", "library_state": status, "attempts": row["attempts"]}
    after = row["execute_after"].timestamp()
    if status == "queued":
        state.update(state="scheduled" if after > now else "queued", until=after if after > now else None)
    elif status == "picked":
        held_by = None if row["queue_manager_id"] is None else str(row["queue_manager_id"])
        state.update(state="running", held_by=held_by, until=row["heartbeat"].timestamp() + HEARTBEAT_TIMEOUT_S)
    elif status == "failed":  # on_failure="hold": parked for a manual re-queue
        state.update(state="failed", reason="failed")
    else:
        state["reason"] = f"pgqueuer queue status {status!r} has no protocol state"
    return state


async def inspect(jobs: list[Job]) -> list[State]:
    import asyncpg
    from pgqueuer import AsyncpgDriver
    from pgqueuer.queries import Queries
    from pgqueuer.types import JobId

    ids: dict[str, int] = json.loads((Path(os.environ["ALKSTORE_FAULTS_STATE"]) / IDS).read_text(encoding="utf-8"))
    connection = await asyncpg.connect(os.environ["ALKSTORE_FAULTS_BROKER"])
    try:
        queries = Queries(AsyncpgDriver(connection))
        rows = await connection.fetch(
            "SELECT id, status, heartbeat, execute_after, attempts, queue_manager_id FROM pgqueuer "
            "WHERE id = ANY($1::bigint[])",
            list(ids.values()),
        )
        logged = {
            int(id_): str(status) for id_, status in await queries.job_status([JobId(id_) for id_ in ids.values()])
        }
        errors = {
            int(log.job_id): f"{log.traceback.exception_type}: {log.traceback.exception_message}"
            for log in sorted(await queries.queue_log(), key=lambda log: log.created)
            if log.traceback is not None
        }
    finally:
        await connection.close()
    queued = {int(row["id"]): row for row in rows}
    now = time.time()
    states: list[State] = []
    for job in jobs:
        id_ = ids[job["id"]]
        if id_ in queued:
            states.append({"job": job["id"], **queued_state(queued[id_], now)})
            continue
        status = logged.get(id_)
        state = LOGGED.get(status or "", "absent")
        reason = errors.get(id_) if state in ("failed", "dead") else None
        states.append({"job": job["id"], **NO_STATE, "state": state, "library_state": status, "reason": reason})
    return states


async def work() -> None:
    from datetime import timedelta

    from tasks import create_pgqueuer

    pgq = await create_pgqueuer()
    await pgq.run(
        heartbeat_timeout=timedelta(seconds=HEARTBEAT_TIMEOUT_S),
        dequeue_timeout=timedelta(seconds=DEQUEUE_TIMEOUT_S),
        max_concurrent_tasks=2,
        batch_size=1,
    )


def worker() -> None:
    asyncio.run(work())


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker, inspect=inspect))
