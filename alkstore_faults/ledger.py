"""The ledger the handlers write (one JSON-lines file per worker) and the runs read out of it.

A record is appended per line and flushed at once, so a worker killed mid-write leaves at most one torn last
line: that line is skipped (and counted), never a reason to refuse the rest. A run is one handler execution
of one job by one process: its ``start`` record and, when the handler got that far, its ``end`` record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Record:
    """One line of a ledger (docs/runtime-faults.md, "worker")."""

    ev: str
    job: str
    worker: str
    pid: int
    attempt: int | None
    mono: float
    wall: float
    ok: bool | None


@dataclass
class Run:
    """One execution of a job's handler: ``end`` is ``None`` while it runs, or when its process died in it."""

    job: str
    worker: str
    pid: int
    attempt: int | None
    start: float
    start_wall: float
    end: float | None = None
    ok: bool | None = None


def _record(line: dict[str, Any]) -> Record:
    ev = line["ev"]
    if ev not in ("start", "end"):
        raise ValueError(f"ev must be 'start' or 'end', got {ev!r}")
    attempt = line.get("attempt")
    return Record(
        ev=ev,
        job=str(line["job"]),
        worker=str(line["worker"]),
        pid=int(line["pid"]),
        attempt=None if attempt is None else int(attempt),
        mono=float(line["mono"]),
        wall=float(line["wall"]),
        ok=None if ev == "start" else bool(line["ok"]),
    )


def read_ledgers(directory: Path) -> tuple[list[Record], list[str]]:
    """Every record of every ``*.jsonl`` ledger in ``directory``, by monotonic time; and the lines skipped, why."""
    records: list[Record] = []
    skipped: list[str] = []
    for path in sorted(directory.glob("*.jsonl")):
        for number, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if not text.strip():
                continue
            try:
                records.append(_record(json.loads(text)))
            except (ValueError, KeyError, TypeError) as exc:
                skipped.append(f"{path.name}:{number}: {exc}")
    records.sort(key=lambda record: record.mono)
    return records, skipped


def runs_of(records: list[Record]) -> list[Run]:
    """Pair each ``start`` with the next ``end`` of the same job in the same process; unpaired starts stay open."""
    open_runs: dict[tuple[str, str, int], Run] = {}
    runs: list[Run] = []
    for record in records:
        key = (record.job, record.worker, record.pid)
        if record.ev == "start":
            run = Run(record.job, record.worker, record.pid, record.attempt, record.mono, record.wall)
            open_runs[key] = run
            runs.append(run)
        elif key in open_runs:
            run = open_runs.pop(key)
            run.end = record.mono
            run.ok = record.ok
    return runs
