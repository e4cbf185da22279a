"""The runner of alkstore's own worker, shared by ``ecosystem/runners/alkstore_*`` (one per engine).

Each of those runners is a ``tasks.py`` that builds its app over its engine's source with ``app_over`` (what
``alkstore worker tasks:app`` loads), and a ``runner.py`` that describes its engine with ``describe`` (the worker's
settings and promises are the same on every engine; the source's settings, the faults it takes and its caveats
are the engine's) and hands the three subcommands to ``serve``. The app has one task, ``run_job``, whose handler is
the harness's (``alkstore_faults.handler``), on a queue with a 3 s visibility timeout, so a worker's heartbeat (a
third of it) keeps a live lease and a dead worker's job is claimed again 3 s after its last heartbeat. Its
``on_settled`` hook writes the ledger's ``ack`` record after the worker acks a completed run: the ack is fenced by
the claim's token, so a run that ends after its lease lapsed is refused (``accepted: false``); an ack that raises (a
server down, a connection cut) settles nothing the worker can tell, so it writes none, and that run stays
unobserved.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

from alkstore_contract import QueueOpts
from alkstore_faults import runner_cli
from alkstore_faults.handler import perform_async, record_ack
from alkstore_faults.runner_cli import Job, exec_console_script
from alkstore_worker import App, JobContext, Settlement, StoreSource, Task

VISIBILITY_TIMEOUT_S = 3.0
WORKER_DOC = "docs/worker.md"
FENCED_FAULTS = ["kill9", "pause", "slow_handler"]
"""The faults under which every ack reaches the store, so its fence is judged (the ``stale`` promise)."""


def app_over(source: StoreSource) -> tuple[App, Task[[dict[str, Any], JobContext], None]]:
    """The app a runner's ``tasks.py`` exposes, over ``source``, and its one task."""
    app = App(source)
    queue = os.environ.get("ALKSTORE_FAULTS_QUEUE") or "default"  # describe runs with none set

    @app.task(name="run_job", queue=queue, queue_opts=QueueOpts(visibility_timeout_s=VISIBILITY_TIMEOUT_S))
    async def run_job(payload: dict[str, Any], context: JobContext) -> None:
        await perform_async(str(payload["id"]), float(payload["duration_s"]), bool(payload["fail"]), context.attempt)

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
    }


def serve(description: dict[str, Any], app: App, task: Task[[dict[str, Any], JobContext], None]) -> int:
    """``describe``, ``enqueue JOBS_FILE`` (``task.defer`` each job) or ``worker`` (``alkstore worker tasks:app``,
    one job at a time, on the run's queue)."""

    async def enqueue(jobs: list[Job]) -> None:
        async with app:
            for job in jobs:
                await task.defer(job)

    def worker() -> None:
        options = ["--concurrency", "1", "--sweep-interval", "1", "--queue", os.environ["ALKSTORE_FAULTS_QUEUE"]]
        exec_console_script("alkstore", "worker", "tasks:app", *options)

    return runner_cli.serve(description, enqueue, worker)
