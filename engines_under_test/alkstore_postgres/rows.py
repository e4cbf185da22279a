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
    every column after ``state`` reads back equal to what was written and goes
    to ``Job`` as it is, positionally (``JOB_COLUMNS`` order).
    """
    job_id, queue, payload, state, *as_stored = record
    return Job(job_id, queue, decode_payload(payload), _STATES[state], *as_stored)


def c2_order_key(job: Job) -> tuple[int, datetime, int]:
    """contract C2's order (priority DESC, run_at, id) as a sort key: RETURNING rows come back unordered."""
    return (-job.priority, job.run_at, int(job.id))
