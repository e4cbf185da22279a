"""SQLite under contention: 4 OS processes x 2 stores each hammer one file for a few seconds.

Every process (tests/contention_worker.py) runs two tasks on each of its two
stores: enqueue, claim, ack, retry, fail, heartbeat and sweep as fast as the
write lock allows, some handles held past their lease so another process
reclaims the job. What this pins:

- no ``database is locked`` — nor any other ``sqlite3`` error — reaches a
  caller: ``BEGIN IMMEDIATE`` and the busy timeout make writers wait their
  turn instead of failing;
- every process did every kind of op, so the contention was real;
- the history checker (contract C4, P2) over every handout and release of every
  process, with the rows left in the file (read with stdlib ``sqlite3``, not
  the engine), finds no duplicate, nothing lost and nothing unexpected.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from alkstore_sqlite import adapter

from alkstore_contract.suite.history import Handout, Release, check_history, handout_from_event
from alkstore_contract.types import QueueOpts

WORKER = Path(__file__).resolve().with_name("contention_worker.py")
PROCESSES = 4
STORES = 2
TASKS_PER_STORE = 2
SECONDS = 5.0
VT_S = 1.0
MAX_ATTEMPTS = 4
PRELOADED = 300
QUEUE = "contention"
CHILD_TIMEOUT_S = 90.0


async def _preload(location: str) -> list[int]:
    store = await adapter.open_store(location, seed=1)
    try:
        queue = store.queue(QUEUE, QueueOpts(visibility_timeout_s=VT_S, max_attempts=MAX_ATTEMPTS))
        return [int(job_id) for job_id in await queue.enqueue_many([{"preloaded": n} for n in range(PRELOADED)])]
    finally:
        await store.close()


def _spawn(location: str, proc: int) -> subprocess.Popen[str]:
    spec = {
        "location": location,
        "proc": proc,
        "seed": 20,
        "stores": STORES,
        "tasks_per_store": TASKS_PER_STORE,
        "seconds": SECONDS,
        "vt_s": VT_S,
        "max_attempts": MAX_ATTEMPTS,
        "queue": QUEUE,
    }
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _collect(process: subprocess.Popen[str]) -> dict[str, Any]:
    try:
        stdout, stderr = process.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"a contention worker ran past {CHILD_TIMEOUT_S} s:\n{stderr[-4000:]}") from None
    assert process.returncode == 0, f"a contention worker crashed ({process.returncode}):\n{stderr[-4000:]}"
    report: dict[str, Any] = json.loads(stdout)
    return report


def _rows(location: str) -> dict[int, str]:
    """Id and state of every row left in the file, read with stdlib sqlite3 (not the engine)."""
    conn = sqlite3.connect(f"{Path(location).absolute().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        return {int(job_id): str(state) for job_id, state in conn.execute("SELECT id, state FROM jobs")}
    finally:
        conn.close()


def test_four_processes_two_stores_each_one_file() -> None:
    location = asyncio.run(adapter.create_location())
    try:
        enqueued = asyncio.run(_preload(location))
        processes = [_spawn(location, proc) for proc in range(PROCESSES)]
        reports = [_collect(process) for process in processes]

        handouts: list[Handout] = []
        releases: list[Release] = []
        for report in reports:
            assert report["errors"] == [], f"process {report['proc']}: errors reached the caller: {report['errors']}"
            ops = report["ops"]
            for op in ("enqueue", "claim", "ack", "retry", "heartbeat", "sweep"):
                assert ops.get(op, 0) > 0, f"process {report['proc']} never did {op}: {ops}"
            enqueued += report["enqueued"]
            handouts += [handout_from_event(h) for h in report["handouts"]]
            releases += [Release(r["job"], r["claim"], r["op"], r["ok"]) for r in report["releases"]]

        rows = _rows(location)
        verdict = check_history(enqueued, handouts, releases, still_present=rows)
        assert verdict.ok, verdict.describe()
        assert verdict.recovered, f"no job was reclaimed after a lapsed lease: {verdict.describe()}"
        assert len({h.worker[:2] for h in handouts}) == PROCESSES, "every process was handed jobs"
    finally:
        asyncio.run(adapter.drop_location(location))
