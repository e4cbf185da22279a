"""The runner of alkstore's own worker, shared by ``ecosystem/runners/alkstore_*`` (one per engine).

Each of those runners is a ``tasks.py`` that builds its app over its engine's source with ``app_over`` (what
``alkstore worker tasks:app`` loads), and a ``runner.py`` that describes the engine's settings and promises and
hands the three subcommands to ``serve``. The app has one task, ``run_job``, whose handler is the harness's
(``alkstore_faults.handler``), on a queue with a 3 s visibility timeout, so a worker's heartbeat (a third of it)
keeps a live lease and a dead worker's job is claimed again 3 s after its last heartbeat. Its ``on_settled``
hook writes the ledger's ``ack`` record after the worker acks a completed run: the ack is fenced by the claim's
token, so a run that ends after its lease lapsed is refused (``accepted: false``); an ack that raises (a server
down, a connection cut) settles nothing the worker can tell, so it writes none, and that run stays unobserved.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from alkstore_contract import QueueOpts
from alkstore_faults.handler import perform_async, read_jobs, record_ack
from alkstore_worker import App, JobContext, Settlement, StoreSource, Task

VISIBILITY_TIMEOUT_S = 3.0
WORKER_DOC = "docs/worker.md"


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


async def _enqueue(app: App, task: Task[[dict[str, Any], JobContext], None], path: str) -> None:
    async with app:
        for job in read_jobs(path):
            await task.defer(job)


def serve(description: dict[str, Any], app: App, task: Task[[dict[str, Any], JobContext], None]) -> int:
    """``describe``, ``enqueue JOBS_FILE`` or ``worker`` (``alkstore worker tasks:app``, one job at a time)."""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "describe":
        sys.stdout.write(json.dumps(description) + "\n")
    elif command == "enqueue":
        asyncio.run(_enqueue(app, task, sys.argv[2]))
    elif command == "worker":
        alkstore = Path(sys.executable).parent / "alkstore"
        argv = [str(alkstore), "worker", "tasks:app", "--concurrency", "1", "--sweep-interval", "1"]
        os.execv(alkstore, [*argv, "--queue", os.environ["ALKSTORE_FAULTS_QUEUE"]])
    else:
        sys.stderr.write(f"unknown command {command!r}: describe, enqueue JOBS_FILE or worker\n")
        return 2
    return 0
