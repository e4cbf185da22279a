"""A worker stopped past its lease (SIGSTOP, then SIGCONT) cancels its stale handler before it runs further.

Real ``alkstore worker`` processes on SQLite and on a real Postgres server
(tests.worker_app's ``side_effects`` task writes a line with the monotonic
clock at each side effect). The worker is stopped while the handler is
mid-way and kept stopped past the lease; once continued, no side effect of
that run may follow: the worker's own clock says the lease is gone, so the
handler is cancelled on its first step after the resume, the run is logged
``cancelled`` (reason ``lease lost``), and the job runs again as attempt 2.
``ALKSTORE_LEASE_STOP_RUNS`` repeats the stop (default once: a few seconds).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from tests import test_worker_processes as processes
from tests.worker_app import SIDE_EFFECTS_LEASE_S as LEASE_S
from tests.worker_processes import workers

store_spec = processes.store_spec
"""The workers' store: an SQLite file, or a fresh schema on the Postgres server (as test_worker_processes's)."""

RUNS = int(os.environ.get("ALKSTORE_LEASE_STOP_RUNS", "1"))


def test_a_worker_stopped_past_its_lease_runs_no_side_effect_after_the_resume(store_spec: str, tmp_path: Path) -> None:
    log = tmp_path / "handlers.jsonl"
    with workers(store_spec, log, "--concurrency", "1") as (worker,):
        for run in range(RUNS):
            job_id = asyncio.run(processes._defer(store_spec, "side_effects", {"steps": 40, "every": 0.05}))

            def effects(job_id: object = job_id) -> list[dict[str, object]]:
                return [line for line in processes._events(log, "side_effect") if line["job"] == job_id]

            worker.until(lambda: len(effects()) >= 2, f"run {run}: the handler's side effects began")
            worker.signal(signal.SIGSTOP)
            time.sleep(LEASE_S * 1.5)
            resumed = time.monotonic()
            worker.signal(signal.SIGCONT)

            def finished(job_id: object = job_id) -> bool:
                return any(line["job"] == job_id for line in processes._events(log, "finished"))

            worker.until(finished, f"run {run}: the job ran again and finished")
            late = [line for line in effects() if float(str(line["mono"])) >= resumed]
            assert late == [], f"run {run}: side effects after the resume: {late[:2]}\n{worker.stderr()}"
            cancelled = [event for event in worker.events() if event["event"] == "cancelled" and event["job"] == job_id]
            assert [(event["reason"], event["attempt"]) for event in cancelled] == [("lease lost", 1)], worker.stderr()
