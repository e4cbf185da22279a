"""One stored job, and the immutable snapshot callers get of it.

A ``JobRecord`` is the engine's row: mutable, never handed to a caller. Its
instants are the aware UTC datetimes the contract computes (``now +
timedelta(...)``), kept as they are: comparing two aware datetimes costs no more
than comparing two ints, and a snapshot then needs no conversion. The payload is
kept as the JSON text ``encode_payload`` produced; ``snapshot`` decodes it afresh
on every read, so a caller mutating ``Job.payload`` can never change the stored
job (DEC-snapshot-copies).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from alkstore_contract.resolution import NewJobs
from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import decode_payload


@lru_cache(maxsize=256)
def as_timedelta(seconds: float) -> timedelta:
    """``timedelta(seconds=seconds)``, remembered.

    Building a timedelta from float seconds costs about a microsecond, once per
    claimed job; the values (a queue's stamps, heartbeat extensions) are few.
    """
    return timedelta(seconds=seconds)


class JobRecord:
    """The stored state of one job.

    ``version`` grows on every change that can make an index entry stale (a
    claim, retry, fail, heartbeat, sweep move); index entries carry the version
    they were filed under and are ignored when it no longer matches.
    ``token`` identifies the claim holding the job (fencing, contract H1).
    """

    __slots__ = (
        "attempts",
        "backoff_base_s",
        "claimed_by",
        "dead_letter_retention_s",
        "died_at",
        "enqueued_at",
        "expires_at",
        "id",
        "last_error",
        "lease_expires_at",
        "max_attempts",
        "payload_json",
        "priority",
        "queue",
        "run_at",
        "state",
        "token",
        "version",
        "visibility_timeout_s",
    )

    def __init__(
        self,
        job_id: int,
        queue: str,
        payload_json: str,
        jobs: NewJobs,
        run_at: datetime,
        expires_at: datetime | None,
        enqueued_at: datetime,
    ) -> None:
        """A ready job of one ``insert``: the stamps of ``jobs``, with the instants the insert resolved once."""
        self.id = job_id
        self.queue = queue
        self.payload_json = payload_json
        self.state = JobState.READY
        self.priority = jobs.priority
        self.attempts = 0
        self.max_attempts = jobs.max_attempts
        self.run_at = run_at
        self.expires_at = expires_at
        self.enqueued_at = enqueued_at
        self.lease_expires_at: datetime | None = None
        self.claimed_by: str | None = None
        self.token: str | None = None
        self.visibility_timeout_s = jobs.visibility_timeout_s
        self.backoff_base_s = jobs.backoff_base_s
        self.dead_letter_retention_s = jobs.dead_letter_retention_s
        self.last_error: str | None = None
        self.died_at: datetime | None = None
        self.version = 0

    def release(self) -> None:
        """Drop the claim: no lease, no claimant, no token (ready and dead jobs hold none, DEC-unclaimed-fields)."""
        self.lease_expires_at = None
        self.claimed_by = None
        self.token = None
        self.version += 1

    def kill(self, last_error: str, now: datetime) -> None:
        """Move to dead at ``now`` with ``last_error``, releasing any claim."""
        self.state = JobState.DEAD
        self.last_error = last_error
        self.died_at = now
        self.release()


def snapshot(record: JobRecord) -> Job:
    """A frozen copy of ``record`` with a freshly decoded payload (contract B3, DEC-snapshot-copies).

    Every claimed job costs one snapshot, so the fields go in positionally, in
    ``alkstore_contract.types.JOB_FIELDS`` order, the cheapest way to call ``Job``.
    """
    return Job(
        record.id,
        record.queue,
        decode_payload(record.payload_json),
        record.state,
        record.priority,
        record.attempts,
        record.max_attempts,
        record.run_at,
        record.expires_at,
        record.enqueued_at,
        record.lease_expires_at,
        record.claimed_by,
        record.visibility_timeout_s,
        record.backoff_base_s,
        record.dead_letter_retention_s,
        record.last_error,
        record.died_at,
    )
