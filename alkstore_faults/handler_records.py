"""The ledger the handlers write (one JSON-lines file per worker) and the runs read out of it.

A record is appended per line and flushed at once, so a worker killed mid-write leaves at most one torn last
line: that line is skipped (and counted), never a reason to refuse the rest. A run is one handler execution
of one job by one process: its ``start`` record and, when the handler got that far, its ``end`` record (or,
when the library or its worker cancelled the run, its ``cancelled`` record instead: the run's interval ends
there), and, when the runner can see it, an ``ack`` record saying whether the library accepted the run's
completion.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = ("start", "end", "ack", "cancelled")


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
    accepted: bool | None = None
    """For an ``ack`` record: whether the library took the completion (``None`` for the other records)."""
    reason: str | None = None
    """For a ``cancelled`` record: why, as ``BY: REASON`` (``library: job_timeout``)."""
    tick: float | None = None
    """For a run of the ``schedule`` workload: the scheduled wall time (epoch seconds) of the tick it runs."""
    library_job: str | None = None
    """For a run of the ``schedule`` workload: the library's id of the job that ran the tick, when it gives one."""


@dataclass
class Run:
    """One execution of a job's handler: ``end`` is ``None`` while it runs, or when its process died in it.

    ``accepted`` is what the library did with the completion of a run that ended: ``True`` it took it, ``False``
    it refused it (a fence: the lease or lock had gone to another worker), ``None`` unobserved (no ``ack``
    record: the runner cannot see it, or the process died before the library settled).
    """

    job: str
    worker: str
    pid: int
    attempt: int | None
    start: float
    start_wall: float
    end: float | None = None
    ok: bool | None = None
    accepted: bool | None = None
    cancelled: str | None = None
    """Why the library or its worker cancelled the run (its ``cancelled`` record), ``None`` when it did not."""
    tick: float | None = None
    """The scheduled wall time of the tick a periodic run runs (its ``start`` record's ``tick``), else ``None``."""
    library_job: str | None = None
    """The library's id of the job a periodic run ran (its ``start`` record's ``library_job``), when it gave one."""


def _record(line: dict[str, Any]) -> Record:
    ev = line["ev"]
    if ev not in EVENTS:
        raise ValueError(f"ev must be one of {', '.join(map(repr, EVENTS))}, got {ev!r}")
    if ev == "ack" and not isinstance(line["accepted"], bool):
        raise ValueError(f"an ack record's accepted must be true or false, got {line['accepted']!r}")
    attempt = line.get("attempt")
    tick = line.get("tick")
    return Record(
        ev=ev,
        job=str(line["job"]),
        worker=str(line["worker"]),
        pid=int(line["pid"]),
        attempt=None if attempt is None else int(attempt),
        mono=float(line["mono"]),
        wall=float(line["wall"]),
        ok=bool(line["ok"]) if ev == "end" else None,
        accepted=line["accepted"] if ev == "ack" else None,
        reason=f"{line.get('by') or 'library'}: {line.get('reason')}" if ev == "cancelled" else None,
        tick=None if tick is None else float(tick),
        library_job=None if line.get("library_job") is None else str(line["library_job"]),
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
    """Pair each ``start`` with the next ``end`` or ``cancelled`` of the same job in the same process (a cancelled
    run ends there, not ok), and each ``ack`` with the
    run of that job in that process that ended last before it; unpaired starts stay open, an ``ack`` with no
    ended run (or one already acked) is ignored."""
    open_runs: dict[tuple[str, str, int], Run] = {}
    ended: dict[tuple[str, str, int], Run] = {}
    runs: list[Run] = []
    for record in records:
        key = (record.job, record.worker, record.pid)
        if record.ev == "start":
            run = Run(record.job, record.worker, record.pid, record.attempt, record.mono, record.wall, tick=record.tick)
            run.library_job = record.library_job
            open_runs[key] = run
            runs.append(run)
        elif record.ev in ("end", "cancelled") and key in open_runs:
            run = open_runs.pop(key)
            run.end = record.mono
            run.ok = record.ok if record.ev == "end" else False
            run.cancelled = record.reason
            ended[key] = run
        elif record.ev == "ack" and key in ended:
            ended.pop(key).accepted = record.accepted
    return runs
