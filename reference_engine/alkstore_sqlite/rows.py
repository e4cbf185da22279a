"""Between ``jobs`` rows and the contract's values: row → ``Job``, ids, instants, durations."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from alkstore_contract.instants import from_epoch_us
from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import INT64_MAX, INT64_MIN, decode_payload

JOB_COLUMNS: tuple[str, ...] = (
    "id",
    "queue",
    "payload",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "run_at",
    "expires_at",
    "enqueued_at",
    "lease_expires_at",
    "claimed_by",
    "visibility_timeout_s",
    "backoff_base_s",
    "dead_letter_retention_s",
    "last_error",
    "died_at",
)
"""The columns a ``Job`` is read from, in ``SELECT``/``RETURNING`` order."""

JOB_COLUMN_LIST = ", ".join(JOB_COLUMNS)

_ONE_US = timedelta(microseconds=1)


def duration_us(seconds: float) -> int:
    """``seconds`` as whole microseconds, rounded exactly as ``datetime + timedelta(seconds=…)`` rounds."""
    return timedelta(seconds=seconds) // _ONE_US


def optional_duration_us(seconds: float | None) -> int | None:
    return None if seconds is None else duration_us(seconds)


def as_row_id(job_id: object) -> int | None:
    """The rowid a job id can name, or ``None`` when no job of this engine can have it.

    This engine's ids are ints; a str (another engine's kind of id) or an int
    beyond SQLite's 64-bit range is simply not found (decision 7), never an error.
    """
    if isinstance(job_id, bool) or not isinstance(job_id, int):
        return None
    return job_id if INT64_MIN <= job_id <= INT64_MAX else None


def decode_job(row: sqlite3.Row) -> Job:
    """A fresh ``Job`` snapshot (payload decoded anew, so callers may mutate it freely)."""
    return Job(
        id=row["id"],
        queue=row["queue"],
        payload=decode_payload(row["payload"]),
        state=JobState(row["state"]),
        priority=row["priority"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        run_at=from_epoch_us(row["run_at"]),
        expires_at=None if row["expires_at"] is None else from_epoch_us(row["expires_at"]),
        enqueued_at=from_epoch_us(row["enqueued_at"]),
        lease_expires_at=None if row["lease_expires_at"] is None else from_epoch_us(row["lease_expires_at"]),
        claimed_by=row["claimed_by"],
        # float(): SQLite may hand back an integral REAL as an int (it does so in RETURNING rows).
        visibility_timeout_s=float(row["visibility_timeout_s"]),
        backoff_base_s=float(row["backoff_base_s"]),
        dead_letter_retention_s=None
        if row["dead_letter_retention_s"] is None
        else float(row["dead_letter_retention_s"]),
        last_error=row["last_error"],
        died_at=None if row["died_at"] is None else from_epoch_us(row["died_at"]),
    )


def claim_order_key(row: sqlite3.Row) -> tuple[int, int, int]:
    """C2 order — priority DESC, ready time ASC, id ASC — for rows ``RETURNING`` gave back unordered."""
    return (-row["priority"], row["run_at"], row["id"])
