"""Our own Postgres engine's side of its runner: an ``alkstore_worker`` app on the run's throwaway cluster."""

from __future__ import annotations

import os
from typing import Any

from alkstore_contract import QueueOpts
from alkstore_faults.handler import perform_async
from alkstore_worker import App, JobContext, PostgresSource

VISIBILITY_TIMEOUT_S = 3.0
QUEUE = os.environ.get("ALKSTORE_FAULTS_QUEUE", "default")

app = App(PostgresSource(os.environ.get("ALKSTORE_FAULTS_BROKER", ""), schema="alkstore_faults"))


@app.task(name="run_job", queue=QUEUE, queue_opts=QueueOpts(visibility_timeout_s=VISIBILITY_TIMEOUT_S))
async def run_job(payload: dict[str, Any], context: JobContext) -> None:
    await perform_async(str(payload["id"]), float(payload["duration_s"]), bool(payload["fail"]), context.attempt)
