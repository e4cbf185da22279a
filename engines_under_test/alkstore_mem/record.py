"""One stored job as a flat tuple, the changes a job goes through, and the immutable snapshot callers get.

Why a plain tuple, not an object with attributes: the cyclic garbage collector.
Every instance of a class is tracked by it, and a full collection walks every
tracked object and everything each one points at. With a million jobs stored
(about 520 MB) one full collection took about 0.5 s, and the number of
long-lived tracked objects is also what brings the next full collection on:
on a 1M backlog, ``enqueue_many`` spent 40-44 % of two of three timed runs in
them. A tuple holding only strs, ints, floats, datetimes and
``None`` is untracked by the first collection that sees it, so a stored job
costs the collector nothing and no longer counts toward the next full
collection. That is why ``state`` is kept as its str value: a ``JobState``
member is itself a tracked object and would keep its tuple tracked.

A record never changes: each change builds the next tuple (``taken``,
``leased``, ``retried``, ``killed``) and the driver stores it in place of the
old one. Fields are read by position, with the constants below; the first 17
are ``alkstore_contract.types.JOB_FIELDS`` in order (with ``payload`` as the
JSON text ``encode_payload`` produced, decoded afresh by every ``snapshot``, so
a caller mutating ``Job.payload`` never changes the stored job,
DEC-snapshot-copies), then the claim ``token`` (fencing, contract H1) and
``version``, which grows on every change that can make an index entry stale;
index entries carry the version they were filed under and are ignored when it
no longer matches. Instants are the aware UTC datetimes the contract computes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from alkstore_contract.kit import new_job
from alkstore_contract.resolution import NewJobs
from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import decode_payload

JobRecord = tuple[Any, ...]
"""A stored job: the 19 fields below, by position."""

(
    ID,
    QUEUE,
    PAYLOAD_JSON,
    STATE,
    PRIORITY,
    ATTEMPTS,
    MAX_ATTEMPTS,
    RUN_AT,
    EXPIRES_AT,
    ENQUEUED_AT,
    LEASE_EXPIRES_AT,
    CLAIMED_BY,
    VISIBILITY_TIMEOUT_S,
    BACKOFF_BASE_S,
    DEAD_LETTER_RETENTION_S,
    LAST_ERROR,
    DIED_AT,
    TOKEN,
    VERSION,
) = range(19)

READY: str = JobState.READY.value
PROCESSING: str = JobState.PROCESSING.value
DEAD: str = JobState.DEAD.value
_STATES = {state.value: state for state in JobState}


@lru_cache(maxsize=256)
def as_timedelta(seconds: float) -> timedelta:
    """``timedelta(seconds=seconds)``, remembered.

    Building a timedelta from float seconds costs about a microsecond, once per
    claimed job; the values (a queue's stamps, heartbeat extensions) are few.
    """
    return timedelta(seconds=seconds)


def new_record(
    job_id: int,
    queue: str,
    payload_json: str,
    jobs: NewJobs,
    run_at: datetime,
    expires_at: datetime | None,
    enqueued_at: datetime,
) -> JobRecord:
    """A ready job of one ``insert``: the stamps of ``jobs``, with the instants the insert resolved once."""
    return (
        job_id,
        queue,
        payload_json,
        READY,
        jobs.priority,
        0,
        jobs.max_attempts,
        run_at,
        expires_at,
        enqueued_at,
        None,
        None,
        jobs.visibility_timeout_s,
        jobs.backoff_base_s,
        jobs.dead_letter_retention_s,
        None,
        None,
        None,
        0,
    )


def taken(record: JobRecord, worker_id: str, token: str, lease_expires_at: datetime) -> JobRecord:
    """contract C3: processing under ``token``, claimed by ``worker_id``, one more attempt, a new lease."""
    fields = list(record)
    fields[STATE] = PROCESSING
    fields[ATTEMPTS] += 1
    fields[LEASE_EXPIRES_AT] = lease_expires_at
    fields[CLAIMED_BY] = worker_id
    fields[TOKEN] = token
    fields[VERSION] += 1
    return tuple(fields)


def leased(record: JobRecord, lease_expires_at: datetime) -> JobRecord:
    """contract H3: the same claim, with a new lease deadline."""
    fields = list(record)
    fields[LEASE_EXPIRES_AT] = lease_expires_at
    fields[VERSION] += 1
    return tuple(fields)


def _released(record: JobRecord, state: str) -> list[Any]:
    """The fields of ``record`` in ``state``, with no lease, claimant or token (DEC-unclaimed-fields)."""
    fields = list(record)
    fields[STATE] = state
    fields[LEASE_EXPIRES_AT] = None
    fields[CLAIMED_BY] = None
    fields[TOKEN] = None
    fields[VERSION] += 1
    return fields


def retried(record: JobRecord, run_at: datetime, last_error: str | None) -> JobRecord:
    """contract R1/R3: ready again at ``run_at``, attempts kept, ``last_error`` replaced unless ``None``."""
    fields = _released(record, READY)
    fields[RUN_AT] = run_at
    if last_error is not None:
        fields[LAST_ERROR] = last_error
    return tuple(fields)


def given_back(record: JobRecord, run_at: datetime) -> JobRecord:
    """contract L2: ready again at ``run_at`` with the claim's attempt given back; ``last_error`` kept."""
    fields = _released(record, READY)
    fields[RUN_AT] = run_at
    fields[ATTEMPTS] -= 1
    return tuple(fields)


def killed(record: JobRecord, last_error: str, now: datetime) -> JobRecord:
    """contract R4/D1/X2: dead at ``now`` with ``last_error``, releasing any claim."""
    fields = _released(record, DEAD)
    fields[LAST_ERROR] = last_error
    fields[DIED_AT] = now
    return tuple(fields)


def snapshot(record: JobRecord) -> Job:
    """A frozen copy of ``record`` with a freshly decoded payload (contract B3, DEC-snapshot-copies).

    Every claimed job costs one snapshot, so the fields go in positionally, in
    ``alkstore_contract.types.JOB_FIELDS`` order, to the kit's ``new_job``.
    """
    return new_job(
        record[ID],
        record[QUEUE],
        decode_payload(record[PAYLOAD_JSON]),
        _STATES[record[STATE]],
        *record[PRIORITY:TOKEN],
    )
