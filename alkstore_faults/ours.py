"""The runner of alkstore's own worker, shared by ``ecosystem/alkstore/runner_*`` (one per engine).

Each of those runners is a ``tasks.py`` that builds its app over its engine's source with ``app_over`` (what
``alkstore worker tasks:app`` loads), and a ``runner.py`` that describes its engine with ``describe`` (the worker's
settings and promises are the same on every engine; the source's settings, the faults it takes and its caveats
are the engine's) and hands the three subcommands to ``serve``. The app has one task, ``run_job``, whose handler is
the harness's (``alkstore_faults.handler``), on a queue with a 3 s visibility timeout, so a worker's heartbeat (a
third of it) keeps a live lease and a dead worker's job is claimed again 3 s after its last heartbeat. Its
``on_settled`` hook writes the ledger's ``ack`` record after the worker acks a completed run: the ack is fenced by
the claim's token, so a run that ends after its lease lapsed is refused (``accepted: false``); an ack that raises (a
server down, a connection cut) settles nothing the worker can tell, so it writes none, and that run stays
unobserved. Its ``inspect`` (protocol 2) reads each job through the store's public ``Queue.get_job`` (contract
B3), by the store's own job id, which ``enqueue`` keeps in ``$ALKSTORE_FAULTS_STATE/ids.json``.

For the schedule workload the app also has a periodic task, ``tick``, every second (``@app.periodic(every=1)``,
docs/worker.md "Periodic tasks"), on a queue of its own (the run's queue + ``-schedule``): only the ``schedule``
subcommand's workers serve that queue, so only they run its scheduler, and the jobs workload sees no tick.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alkstore_contract import Job as StoredJob
from alkstore_contract import JobState, QueueOpts
from alkstore_faults import runner_cli
from alkstore_faults.handler import perform_async, perform_tick_async, record_ack
from alkstore_faults.runner_cli import Job, State, exec_console_script
from alkstore_worker import App, JobContext, Settlement, StoreSource, Task, WorkerSource, tick_of

VISIBILITY_TIMEOUT_S = 3.0
WORKER_DOC = "docs/worker.md"
CONTRACT_DOC = "docs/contract.md"
FENCED_FAULTS = ["kill9", "startup", "pause", "slow_handler"]
"""The faults under which every ack reaches the store, so its fence is judged (the ``stale`` promise)."""
SCHEDULE_SUFFIX = "-schedule"
"""The schedule workload's queue: the run's queue with this suffix."""
PERIODIC_DOC = WORKER_DOC + "#periodic-tasks"


def app_over(source: StoreSource | WorkerSource) -> tuple[App, Task[[dict[str, Any], JobContext], None]]:
    """The app a runner's ``tasks.py`` exposes, over ``source``, and its one task."""
    app = App(source)
    queue = os.environ.get("ALKSTORE_FAULTS_QUEUE") or "default"  # describe runs with none set

    @app.task(name="run_job", queue=queue, queue_opts=QueueOpts(visibility_timeout_s=VISIBILITY_TIMEOUT_S))
    async def run_job(payload: dict[str, Any], context: JobContext) -> None:
        await perform_async(str(payload["id"]), float(payload["duration_s"]), bool(payload["fail"]), context.attempt)

    @app.periodic(
        name="tick",
        every=1,
        queue=queue + SCHEDULE_SUFFIX,
        queue_opts=QueueOpts(visibility_timeout_s=VISIBILITY_TIMEOUT_S),
    )
    async def tick(payload: dict[str, str], context: JobContext) -> None:
        await perform_tick_async(tick_of(payload).timestamp(), context.attempt, str(context.job.id))

    @app.on_settled
    def ledger_ack(settlement: Settlement) -> None:
        if settlement.action == "ack" and isinstance(settlement.payload, dict):
            record_ack(str(settlement.payload["id"]), settlement.job.attempts, settlement.accepted)

    return app, run_job


def describe(
    engine: str,
    *,
    source_settings: list[dict[str, Any]],
    faults: list[str],
    recovery_window_s: float,
    caveats: list[dict[str, Any]],
    schedule_faults: list[str],
) -> dict[str, Any]:
    """The description of our worker over ``engine``: the queue's and the worker's settings, and what docs/worker.md
    and docs/contract.md promise under every fault the engine takes (no loss, no second holder of a live lease) and
    under the faults where an ack cannot be in doubt (``FENCED_FAULTS``: a late completion refused)."""
    return {
        "library": f"alkstore worker + {engine}",
        "version": version("alkstore"),
        "settings": [
            {
                "name": "QueueOpts(visibility_timeout_s=...)",
                "value": VISIBILITY_TIMEOUT_S,
                "doc": WORKER_DOC + "#an-app-and-its-tasks",
            },
            *source_settings,
            {"name": "alkstore worker --concurrency", "value": 1, "doc": WORKER_DOC + "#alkstore-worker"},
            {"name": "alkstore worker --sweep-interval", "value": 1, "doc": WORKER_DOC + "#alkstore-worker"},
        ],
        "lease_s": VISIBILITY_TIMEOUT_S,
        "recovery_window_s": recovery_window_s,
        "inspect_doc": CONTRACT_DOC + "#b--batch-ack-cancel-get_job",
        "policies": [],
        "recovery_rules": [
            {
                "state": "running",
                "after_s": VISIBILITY_TIMEOUT_S,
                "rule": "a dead worker's job is claimed again when its lease lapses",
                "quote": "the unfinished jobs come back when their leases lapse, as after a crash",
                "doc": WORKER_DOC + "#stopping-sigterm-and-sigint",
            }
        ],
        "faults": faults,
        "promises": [
            {
                "outcome": "lost",
                "faults": faults,
                "max": 0,
                "quote": "the unfinished jobs come back when their leases lapse, as after a crash",
                "doc": WORKER_DOC + "#stopping-sigterm-and-sigint",
            },
            {
                "outcome": "concurrent",
                "faults": ["slow_handler"],
                "max": 0,
                "quote": "keeps its lease: a heartbeat every third of the job's visibility timeout (H3).",
                "doc": WORKER_DOC + "#how-a-job-runs",
            },
            {
                "outcome": "stale",
                "faults": FENCED_FAULTS,
                "max": 0,
                "quote": "After a lapse and a reclaim, the old handle's ops return `False` and the new holder's "
                "succeed.",
                "doc": "docs/contract.md#h--handle-operations",
            },
        ],
        "caveats": caveats,
        "workloads": ["jobs", "schedule"],
        "schedule": schedule(schedule_faults),
    }


def schedule(faults: list[str]) -> dict[str, Any]:
    """The schedule workload: ``@app.periodic(every=1)`` in every worker, and what docs/worker.md says of its ticks."""
    return {
        "every_s": 1,
        "schedulers": "every",
        "grace_s": 5,
        "faults": faults,
        "settings": [
            {"name": "@app.periodic(every=...)", "value": 1, "doc": PERIODIC_DOC},
            {"name": "alkstore worker --queue", "value": "the tick's queue, in every worker", "doc": PERIODIC_DOC},
        ],
        "skips": [
            {
                "when": when,
                "quote": "Ticks whose windows passed while no worker ran (all stopped, or all stalled, or the store "
                "unreachable) run once, at the next start, not once each",
                "doc": WORKER_DOC + "#missed-ticks",
            }
            for when in ("scheduler_down", "broker_down")
        ],
        "promises": [
            {  # under a server restart or a cut an ack may be lost and the tick's job run again (the caveat)
                "outcome": "tick_twice",
                "faults": [fault for fault in faults if fault in FENCED_FAULTS],
                "max": 0,
                "quote": "No tick is stored twice, provided no worker's clock runs behind the store's clock",
                "doc": WORKER_DOC + "#each-tick-once",
            },
            {
                "outcome": "tick_missed",
                "faults": [fault for fault in faults if fault in ("kill9", "pause")],
                "max": 0,
                "quote": "every worker serving the task's queue (`--queue`), in each of its processes; none is special "
                "and none is elected.",
                "doc": PERIODIC_DOC,
            },
        ],
        "caveats": [
            {
                "outcome": "tick_twice",
                "faults": ["*"],
                "quote": "runs at least once like any (a crash re-runs it): a handler must tolerate a second run of "
                "one tick's job.",
                "doc": PERIODIC_DOC,
            }
        ],
    }


def _epoch(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def state_of(job: str, stored: StoredJob | None, now: datetime) -> State:
    """What the store holds for one job, in the protocol's words: an acked job is deleted (contract B1), so a
    job with no row is ``absent``, whether it completed or was never stored; the checker reads that only for a
    job no run completed."""
    if stored is None:
        state, until, held, reason, words = "absent", None, None, None, "no row (an ack deletes the job)"
    elif stored.state is JobState.DEAD:
        state, until, held, reason, words = "dead", None, None, stored.last_error, stored.state.value
    elif stored.state is JobState.PROCESSING:
        state, until, held, reason, words = (
            "running",
            _epoch(stored.lease_expires_at),
            stored.claimed_by,
            None,
            stored.state.value,
        )
    elif stored.run_at > now:
        state, until, held, reason, words = "scheduled", _epoch(stored.run_at), None, stored.last_error, "ready"
    else:
        state, until, held, reason, words = "queued", None, None, stored.last_error, stored.state.value
    return {
        "job": job,
        "state": state,
        "library_state": words,
        "reason": reason,
        "until": until,
        "held_by": held,
        "attempts": None if stored is None else stored.attempts,
    }


def _ids() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "ids.json"


def serve(description: dict[str, Any], app: App, task: Task[[dict[str, Any], JobContext], None]) -> int:
    """``describe``, ``enqueue JOBS_FILE`` (``task.defer`` each job, keeping the store's ids), ``worker``
    (``alkstore worker tasks:app``, one job at a time, on the run's queue) or ``inspect JOBS_FILE``
    (``Queue.get_job`` of each)."""

    async def enqueue(jobs: list[Job]) -> None:
        ids: dict[str, Any] = {}
        async with app:
            for job in jobs:
                ids[str(job["id"])] = await task.defer(job)
        if os.environ.get("ALKSTORE_FAULTS_STATE"):
            _ids().write_text(json.dumps(ids), encoding="utf-8")

    async def inspect(jobs: list[Job]) -> list[State]:
        ids = json.loads(_ids().read_text(encoding="utf-8"))
        async with app:
            queue = await app.queue_for(task)
            now = datetime.now(UTC)
            return [state_of(str(job["id"]), await queue.get_job(ids[str(job["id"])]), now) for job in jobs]

    def worker(queue: str) -> None:
        options = ["--concurrency", "1", "--sweep-interval", "1", "--queue", queue]
        exec_console_script("alkstore", "worker", "tasks:app", *options)

    queue = os.environ.get("ALKSTORE_FAULTS_QUEUE", "")
    return runner_cli.serve(
        description,
        enqueue,
        lambda: worker(queue),
        inspect=inspect,
        schedule=lambda: worker(queue + SCHEDULE_SUFFIX),
    )
