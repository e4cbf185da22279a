"""toysched: the smallest scheduler over one SQLite file, with the runtime-faults runner protocol's ``schedule``
workload (docs/runtime-faults.md). It exists to test the harness's schedule checker.

Every worker runs the scheduler: at each whole second it claims that second's tick by inserting its row (a
primary key, so one worker of many wins) and runs the tick's handler; a worker that was stopped picks up at the
next tick after it resumes, and the other workers fire the ticks meanwhile. Correct, a tick fires once, and no
tick is missed while a worker is stopped. ``--mutant`` breaks it, each a way a real scheduler breaks:

- ``every_fires``: no claim: every worker fires every tick (three schedulers, three runs of each tick);
- ``misses``: every scheduler fires only the even seconds, so every other tick is never fired.

Usage: ``runner.py [--mutant NAME] describe | enqueue JOBS_FILE | schedule``.
"""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from alkstore_faults.handler import perform_tick
from alkstore_faults.runner_cli import Job, serve

MUTANTS = ("every_fires", "misses")
HERE = "tests/fault_runtimes/toysched/runner.py"


def describe(mutant: str | None) -> dict[str, Any]:
    """toysched's docs are this file's docstring, so its promises quote it."""
    return {
        "library": "toysched" + (f"[{mutant}]" if mutant else ""),
        "version": "1",
        "settings": [{"name": "every_s", "value": 1, "doc": HERE}],
        "lease_s": 2.0,
        "recovery_window_s": 3.0,
        "faults": ["kill9"],
        "promises": [],
        "caveats": [],
        "workloads": ["schedule"],
        "schedule": {
            "every_s": 1,
            "schedulers": "every",
            "grace_s": 2,
            "faults": ["kill9", "pause"],
            "promises": [
                {
                    "outcome": "tick_twice",
                    "faults": ["*"],
                    "max": 0,
                    "quote": "Correct, a tick fires once",
                    "doc": HERE,
                },
                {
                    "outcome": "tick_missed",
                    "faults": ["pause"],
                    "max": 0,
                    "quote": "no tick is missed while a worker is stopped",
                    "doc": HERE,
                },
            ],
        },
    }


def connect() -> sqlite3.Connection:
    path = Path(os.environ["ALKSTORE_FAULTS_BROKER"]) / f"{os.environ['ALKSTORE_FAULTS_QUEUE']}.sqlite3"
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS ticks (tick INTEGER PRIMARY KEY, worker TEXT)")
    return db


def enqueue(jobs: list[Job]) -> None:
    connect()


def schedule(mutant: str | None) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    db = connect()
    step = 2 if mutant == "misses" else 1
    # Every worker's ticks on one grid: the misses variant's workers all take the even seconds, never together all.
    tick = (math.floor(time.time()) // step + 1) * step
    while True:
        time.sleep(max(0.0, tick - time.time()))
        claimed = mutant == "every_fires" or (
            db.execute(
                "INSERT OR IGNORE INTO ticks (tick, worker) VALUES (?, ?)", (tick, os.environ["ALKSTORE_FAULTS_WORKER"])
            ).rowcount
            == 1
        )
        if claimed:
            perform_tick(float(tick))
        tick = max(tick + step, math.floor(time.time()) + 1) if mutant != "misses" else tick + step


def main() -> int:
    argv = sys.argv[1:]
    mutant = None
    if argv[:1] == ["--mutant"] and len(argv) > 1 and argv[1] in MUTANTS:
        mutant, argv = argv[1], argv[2:]
    if argv == ["schedule"]:
        schedule(mutant)
        return 0
    return serve(describe(mutant), enqueue, lambda: sys.exit("toysched has no jobs workload"), argv)


if __name__ == "__main__":
    sys.exit(main())
