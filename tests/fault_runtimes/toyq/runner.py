"""toyq: the smallest lease-based queue runtime, over one SQLite file, with the runtime-faults runner protocol.

It exists to test the runtime-faults harness (docs/runtime-faults.md): correct, it loses no job to a killed
or paused worker (leases expire and the job is claimed again) and keeps a live worker's job (a heartbeat
thread renews the lease; the ack is fenced by the claim's token, so a worker that resumes after its lease lapsed
cannot complete a job another claim holds). Its worker writes the ledger's ``ack`` record: whether its ack
updated the job. Its ``inspect`` (protocol 2) reads each job's row: done, failed (with its error), ready,
running (held until its lease), or no row at all. ``--mutant`` breaks one of those, each a way a real runtime
breaks, or changes one documented rule, and the harness's tests show that the checker classes each as it must:

- ``ack_first``: the job is marked done when it is claimed, before the handler runs (a crash loses it: the
  library says completed a job no run completed);
- ``no_redeliver``: an expired lease is never claimed again (a crash strands the job, held forever);
- ``drop``: a claim deletes the job's row and keeps it in the worker's memory (a crash leaves no record of it);
- ``redeliver_live``: a job is claimed again 0.3 s after its claim, whatever its heartbeat says;
- ``unfenced_ack``: the ack ignores the claim's token, so a late completion overwrites another claim's job;
- ``job_timeout``: a documented policy: a handler that runs past 2 s is cancelled and its job failed with
  ``TimeoutError``, never run again;
- ``long_lock``: a documented rule: a claim is held for an hour, and a killed worker's job runs again when that
  hour is up (later than any run waits).

Usage: ``runner.py [--mutant NAME] describe | enqueue JOBS_FILE | worker | inspect JOBS_FILE``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from alkstore_faults.handler import record, record_cancelled
from alkstore_faults.runner_cli import Job, State, serve

LEASE_S = 2.0
LONG_LOCK_S = 3600.0
JOB_TIMEOUT_S = 2.0
HEARTBEAT_S = 0.4
POLL_S = 0.05
REDELIVER_LIVE_AFTER_S = 0.3
MUTANTS = ("ack_first", "no_redeliver", "drop", "redeliver_live", "unfenced_ack", "job_timeout", "long_lock")
HERE = "tests/fault_runtimes/toyq/runner.py"


def lease_s(mutant: str | None) -> float:
    return LONG_LOCK_S if mutant == "long_lock" else LEASE_S


def describe(mutant: str | None) -> dict[str, Any]:
    """The runner's description: toyq's own docs are this file's docstring, so its promises quote it."""
    rules = {
        None: ("an expired lease is claimed again", LEASE_S),
        "long_lock": ("a killed worker's job runs again when that hour is up", LONG_LOCK_S),
    }
    rule = rules.get(mutant, rules[None]) if mutant != "no_redeliver" else None
    policy = {
        "state": "failed",
        "reason": "TimeoutError",
        "setting": "JOB_TIMEOUT_S",
        "quote": "a handler that runs past 2 s is cancelled and its job failed",
        "doc": HERE,
    }
    return {
        "inspect_doc": HERE,
        "policies": [policy] if mutant == "job_timeout" else [],
        "recovery_rules": []
        if rule is None
        else [{"state": "running", "after_s": rule[1], "rule": rule[0], "quote": rule[0], "doc": HERE}],
        "library": "toyq" + (f"[{mutant}]" if mutant else ""),
        "version": "1",
        "settings": [
            {"name": "lease_s", "value": LEASE_S, "doc": HERE},
            {"name": "heartbeat_s", "value": HEARTBEAT_S, "doc": HERE},
        ],
        "lease_s": lease_s(mutant),
        "recovery_window_s": LEASE_S + 3,
        "faults": ["kill9", "startup", "pause", "slow_handler"] if mutant != "long_lock" else ["kill9"],
        "promises": [
            {
                "outcome": "lost",
                "faults": ["*"],
                "max": 0,
                "quote": "it loses no job to a killed or paused worker (leases expire and the job is claimed again)",
                "doc": HERE,
            },
            {
                "outcome": "concurrent",
                "faults": ["slow_handler"],
                "max": 0,
                "quote": "keeps a live worker's job (a heartbeat thread renews the lease",
                "doc": HERE,
            },
            {
                "outcome": "stale",
                "faults": ["pause"],
                "max": 0,
                "quote": "a worker that resumes after its lease lapsed cannot complete a job another claim holds",
                "doc": HERE,
            },
        ],
        "caveats": [],
    }


def connect() -> sqlite3.Connection:
    path = Path(os.environ["ALKSTORE_FAULTS_BROKER"]) / f"{os.environ['ALKSTORE_FAULTS_QUEUE']}.sqlite3"
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, duration REAL, fail INTEGER, state TEXT, "
        "token INTEGER DEFAULT 0, claimed_at REAL, lease_until REAL, attempts INTEGER DEFAULT 0, error TEXT)"
    )
    return db


def enqueue(jobs: list[Job]) -> None:
    db = connect()
    for job in jobs:
        db.execute(
            "INSERT INTO jobs (id, duration, fail, state) VALUES (?, ?, ?, 'ready')",
            (job["id"], float(job["duration_s"]), int(bool(job["fail"]))),
        )


def inspect(jobs: list[Job], mutant: str | None) -> list[State]:
    """Each job's row, in toyq's words: its state column, its lease, its attempts, its error."""
    db = connect()
    states = []
    for job in jobs:
        row = db.execute("SELECT state, lease_until, attempts, error FROM jobs WHERE id = ?", (job["id"],)).fetchone()
        state, until = {None: ("absent", None), "done": ("completed", None), "failed": ("failed", None)}.get(
            None if row is None else row[0], ("queued", None)
        )
        if row is not None and row[0] == "running":
            state, until = "running", None if mutant == "no_redeliver" else row[1]
        states.append(
            {
                "job": job["id"],
                "state": state,
                "library_state": None if row is None else row[0],
                "reason": None if row is None else row[3],
                "until": until,
                "held_by": None,
                "attempts": None if row is None else row[2],
            }
        )
    return states


def claim(db: sqlite3.Connection, mutant: str | None) -> tuple[str, float, bool, int, int] | None:
    now = time.time()
    values: tuple[float, ...]
    if mutant == "no_redeliver":
        where, values = "state = 'ready'", ()
    elif mutant == "redeliver_live":
        where, values = "state = 'ready' OR (state = 'running' AND claimed_at < ?)", (now - REDELIVER_LIVE_AFTER_S,)
    else:
        where, values = "state = 'ready' OR (state = 'running' AND lease_until < ?)", (now,)
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute(
            f"SELECT id, duration, fail, token, attempts FROM jobs WHERE {where} LIMIT 1", values
        ).fetchone()
        if row is None:
            return None
        state = "done" if mutant == "ack_first" else "running"
        db.execute(
            "UPDATE jobs SET state = ?, token = token + 1, claimed_at = ?, lease_until = ?, attempts = attempts + 1 "
            "WHERE id = ?",
            (state, now, now + lease_s(mutant), row[0]),
        )
        if mutant == "drop":
            db.execute("DELETE FROM jobs WHERE id = ?", (row[0],))
        return str(row[0]), float(row[1]), bool(row[2]), int(row[3]) + 1, int(row[4]) + 1
    finally:
        db.execute("COMMIT")


def heartbeat(job: str, token: int, stop: threading.Event, lease: float) -> None:
    db = connect()
    while not stop.wait(HEARTBEAT_S):
        db.execute("UPDATE jobs SET lease_until = ? WHERE id = ? AND token = ?", (time.time() + lease, job, token))


def worker(mutant: str | None) -> None:
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    db = connect()
    while not stopping.is_set():
        claimed = claim(db, mutant)
        if claimed is None:
            time.sleep(POLL_S)
            continue
        job, duration, fail, token, attempt = claimed
        stop = threading.Event()
        beats = threading.Thread(target=heartbeat, args=(job, token, stop, lease_s(mutant)), daemon=True)
        beats.start()
        record("start", job, attempt)
        if mutant == "job_timeout" and duration > JOB_TIMEOUT_S:
            time.sleep(JOB_TIMEOUT_S)
            record_cancelled(job, attempt, "job_timeout")
            stop.set()
            beats.join()
            db.execute("UPDATE jobs SET state = 'failed', error = 'TimeoutError' WHERE id = ?", (job,))
            continue
        time.sleep(duration)
        record("end", job, attempt, ok=not fail)
        stop.set()
        beats.join()
        fence, values = ("", ()) if mutant in ("unfenced_ack", "drop") else (" AND token = ?", (token,))
        if mutant == "drop":
            db.execute(
                "INSERT OR IGNORE INTO jobs (id, duration, fail, state) VALUES (?, ?, ?, 'running')",
                (job, duration, fail),
            )
        acked = db.execute(
            f"UPDATE jobs SET state = ?, error = ? WHERE id = ?{fence}",
            ("failed" if fail else "done", "JobFailed" if fail else None, job, *values),
        ).rowcount
        if not fail:
            record("ack", job, attempt, accepted=acked == 1)


def main() -> int:
    argv = sys.argv[1:]
    mutant = None
    if argv[:1] == ["--mutant"] and len(argv) > 1 and argv[1] in MUTANTS:
        mutant, argv = argv[1], argv[2:]
    return serve(describe(mutant), enqueue, lambda: worker(mutant), argv, inspect=lambda jobs: inspect(jobs, mutant))


if __name__ == "__main__":
    sys.exit(main())
