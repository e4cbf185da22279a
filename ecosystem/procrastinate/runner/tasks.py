"""procrastinate's side of its runner: the app on the throwaway cluster and the one task, as a user writes them."""

from __future__ import annotations

import os

import procrastinate

from alkstore_faults.handler import perform

app = procrastinate.App(
    connector=procrastinate.PsycopgConnector(conninfo=os.environ.get("ALKSTORE_FAULTS_BROKER") or "postgresql://")
)


@app.task(name="run_job", queue=os.environ.get("ALKSTORE_FAULTS_QUEUE", "default"))
def run_job(job: str, duration_s: float, fail: bool) -> str:
    return perform(job, duration_s, fail)
