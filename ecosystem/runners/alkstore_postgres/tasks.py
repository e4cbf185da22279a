"""Our own Postgres engine's side of its runner: an ``alkstore_worker`` app on the run's throwaway cluster.

Its ``on_settled`` hook writes the ledger's ``ack`` record after the worker acks a completed run (the ack is
fenced by the claim's token). An ack that raises (the server down, the connection cut) settles nothing the worker
can tell, so it writes none: that run's fate stays unobserved.
"""

from __future__ import annotations

import os
from typing import Any

from alkstore_contract import QueueOpts
from alkstore_faults.handler import perform_async, record_ack
from alkstore_worker import App, JobContext, PostgresSource, Settlement

VISIBILITY_TIMEOUT_S = 3.0
QUEUE = os.environ.get("ALKSTORE_FAULTS_QUEUE", "default")

app = App(PostgresSource(os.environ.get("ALKSTORE_FAULTS_BROKER", ""), schema="alkstore_faults"))


@app.task(name="run_job", queue=QUEUE, queue_opts=QueueOpts(visibility_timeout_s=VISIBILITY_TIMEOUT_S))
async def run_job(payload: dict[str, Any], context: JobContext) -> None:
    await perform_async(str(payload["id"]), float(payload["duration_s"]), bool(payload["fail"]), context.attempt)


@app.on_settled
def ledger_ack(settlement: Settlement) -> None:
    if settlement.action == "ack" and isinstance(settlement.payload, dict):
        record_ack(str(settlement.payload["id"]), settlement.job.attempts, settlement.accepted)
