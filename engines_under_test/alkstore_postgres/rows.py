"""Reading job rows back into the contract's ``Job`` snapshots."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import decode_payload

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
"""The columns a snapshot needs, in ``Job``'s field order (the claim token stays in the table)."""


def job_from_record(record: Any) -> Job:
    """A snapshot of one asyncpg record; the payload is decoded fresh each time (a caller may mutate it).

    asyncpg returns ``timestamptz`` as aware UTC datetimes at microsecond
    precision, so instants read back equal to what was written.
    """
    return Job(
        id=int(record["id"]),
        queue=record["queue"],
        payload=decode_payload(record["payload"]),
        state=JobState(record["state"]),
        priority=int(record["priority"]),
        attempts=int(record["attempts"]),
        max_attempts=int(record["max_attempts"]),
        run_at=record["run_at"],
        expires_at=record["expires_at"],
        enqueued_at=record["enqueued_at"],
        lease_expires_at=record["lease_expires_at"],
        claimed_by=record["claimed_by"],
        visibility_timeout_s=float(record["visibility_timeout_s"]),
        backoff_base_s=float(record["backoff_base_s"]),
        dead_letter_retention_s=record["dead_letter_retention_s"],
        last_error=record["last_error"],
        died_at=record["died_at"],
    )


def c2_order_key(job: Job) -> tuple[int, datetime, int]:
    """SPEC C2's order (priority DESC, run_at, id) as a sort key: RETURNING rows come back unordered."""
    return (-job.priority, job.run_at, int(job.id))
