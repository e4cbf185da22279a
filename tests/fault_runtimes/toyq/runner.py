"""toyq: the smallest lease-based queue runtime, over one SQLite file, with the runtime-faults runner protocol.

It exists to test the runtime-faults harness (docs/runtime-faults.md): correct, it loses no job to a killed
or paused worker (leases expire and the job is claimed again) and keeps a live worker's job (a heartbeat
thread renews the lease; the ack is fenced by the claim's token, so a worker that resumes after its lease lapsed
cannot complete a job another claim holds). Its worker writes the ledger's ``ack`` record: whether its ack
updated the job. ``--mutant`` breaks one of those, each a way a real runtime breaks, and the harness's tests show
that the checker catches each:

- ``ack_first``: the job is marked done when it is claimed, before the handler runs (a crash loses it);
- ``no_redeliver``: an expired lease is never claimed again (a crash strands the job);
- ``redeliver_live``: a job is claimed again 0.3 s after its claim, whatever its heartbeat says;
- ``unfenced_ack``: the ack ignores the claim's token, so a late completion overwrites another claim's job.

Usage: ``runner.py [--mutant NAME] describe | enqueue JOBS_FILE | worker``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from alkstore_faults.handler import record

LEASE_S = 2.0
HEARTBEAT_S = 0.4
POLL_S = 0.05
REDELIVER_LIVE_AFTER_S = 0.3
MUTANTS = ("ack_first", "no_redeliver", "redeliver_live", "unfenced_ack")
HERE = "tests/fault_runtimes/toyq/runner.py"


def describe(mutant: str | None) -> dict[str, Any]:
    """The runner's description: toyq's own docs are this file's docstring, so its promises quote it."""
    return {
        "library": "toyq" + (f"[{mutant}]" if mutant else ""),
        "version": "1",
        "settings": [
            {"name": "lease_s", "value": LEASE_S, "doc": HERE},
            {"name": "heartbeat_s", "value": HEARTBEAT_S, "doc": HERE},
        ],
        "lease_s": LEASE_S,
        "recovery_window_s": LEASE_S + 3,
        "faults": ["kill9", "pause", "slow_handler"],
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
        "token INTEGER DEFAULT 0, claimed_at REAL, lease_until REAL, attempts INTEGER DEFAULT 0)"
    )
    return db


def enqueue(jobs_file: Path) -> None:
    db = connect()
    for line in jobs_file.read_text(encoding="utf-8").splitlines():
        job = json.loads(line)
        db.execute(
            "INSERT INTO jobs (id, duration, fail, state) VALUES (?, ?, ?, 'ready')",
            (job["id"], float(job["duration_s"]), int(bool(job["fail"]))),
        )


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
            (state, now, now + LEASE_S, row[0]),
        )
        return str(row[0]), float(row[1]), bool(row[2]), int(row[3]) + 1, int(row[4]) + 1
    finally:
        db.execute("COMMIT")


def heartbeat(job: str, token: int, stop: threading.Event) -> None:
    db = connect()
    while not stop.wait(HEARTBEAT_S):
        db.execute("UPDATE jobs SET lease_until = ? WHERE id = ? AND token = ?", (time.time() + LEASE_S, job, token))


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
        beats = threading.Thread(target=heartbeat, args=(job, token, stop), daemon=True)
        beats.start()
        record("start", job, attempt)
        time.sleep(duration)
        record("end", job, attempt, ok=not fail)
        stop.set()
        beats.join()
        fence, values = ("", ()) if mutant == "unfenced_ack" else (" AND token = ?", (token,))
        acked = db.execute(
            f"UPDATE jobs SET state = ? WHERE id = ?{fence}", ("failed" if fail else "done", job, *values)
        ).rowcount
        if not fail:
            record("ack", job, attempt, accepted=acked == 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutant", choices=MUTANTS)
    parser.add_argument("command", choices=("describe", "enqueue", "worker"))
    parser.add_argument("jobs_file", nargs="?", type=Path)
    args = parser.parse_args()
    if args.command == "describe":
        sys.stdout.write(json.dumps(describe(args.mutant)) + "\n")
    elif args.command == "enqueue":
        if args.jobs_file is None:
            parser.error("enqueue needs JOBS_FILE")
        enqueue(args.jobs_file)
    else:
        worker(args.mutant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
