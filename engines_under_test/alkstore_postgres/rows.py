"""Reading job rows back into the contract's ``Job`` snapshots."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alkstore_contract.types import JOB_FIELDS, Job, JobState
from alkstore_contract.validation import decode_payload

JOB_COLUMNS = JOB_FIELDS
"""The columns a snapshot needs, in ``Job``'s field order (the claim token stays in the table)."""

_STATES = {state.value: state for state in JobState}


def job_from_record(record: Any) -> Job:
    """A snapshot of one asyncpg record; the payload is decoded fresh each time (a caller may mutate it).

    asyncpg returns ``bigint``/``integer`` as ``int``, ``float8`` as ``float``
    and ``timestamptz`` as aware UTC datetimes at microsecond precision, so
    values read back equal to what was written and need no conversion. A claim
    of a hundred jobs makes a hundred snapshots: the record is unpacked by
    position (``JOB_COLUMNS`` order) and ``Job`` built positionally, which a
    frozen dataclass takes faster than keywords.
    """
    (
        job_id,
        queue,
        payload,
        state,
        priority,
        attempts,
        max_attempts,
        run_at,
        expires_at,
        enqueued_at,
        lease_expires_at,
        claimed_by,
        visibility_timeout_s,
        backoff_base_s,
        dead_letter_retention_s,
        last_error,
        died_at,
    ) = record
    return Job(
        job_id,
        queue,
        decode_payload(payload),
        _STATES[state],
        priority,
        attempts,
        max_attempts,
        run_at,
        expires_at,
        enqueued_at,
        lease_expires_at,
        claimed_by,
        visibility_timeout_s,
        backoff_base_s,
        dead_letter_retention_s,
        last_error,
        died_at,
    )


def c2_order_key(job: Job) -> tuple[int, datetime, int]:
    """SPEC C2's order (priority DESC, run_at, id) as a sort key: RETURNING rows come back unordered."""
    return (-job.priority, job.run_at, int(job.id))
