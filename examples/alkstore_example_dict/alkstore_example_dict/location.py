"""Where the example engine keeps its jobs: one plain ``dict`` per location, in this process.

A location (what ``create_location`` returns and ``open_store`` opens) is a
name in ``LOCATIONS``. Every store opened on one name works on the very same
``Location`` object, which is all the ``shared_location`` capability (contract P1)
asks of an in-process engine. Nothing here outlives the process, so the engine
declares neither ``durable`` nor ``multi_process``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from alkstore_contract.resolution import NewJob
from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import decode_payload


@dataclass
class StoredJob:
    """One job as the location keeps it: the fields of ``Job``, plus the token of the claim holding it.

    The payload stays the JSON text ``encode_payload`` produced, and is decoded
    afresh for every snapshot, so a caller mutating ``Job.payload`` never
    changes the stored job.
    """

    id: int
    queue: str
    payload_json: str
    priority: int
    max_attempts: int
    run_at: datetime
    expires_at: datetime | None
    enqueued_at: datetime
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None
    state: JobState = JobState.READY
    attempts: int = 0
    lease_expires_at: datetime | None = None
    claimed_by: str | None = None
    token: str | None = None
    last_error: str | None = None
    died_at: datetime | None = None

    @classmethod
    def from_new(cls, job_id: int, queue: str, new: NewJob) -> StoredJob:
        """A ready job from what ``resolve_new_job`` computed: stored verbatim, no arithmetic here."""
        return cls(
            id=job_id,
            queue=queue,
            payload_json=new.payload_json,
            priority=new.priority,
            max_attempts=new.max_attempts,
            run_at=new.run_at,
            expires_at=new.expires_at,
            enqueued_at=new.enqueued_at,
            visibility_timeout_s=new.visibility_timeout_s,
            backoff_base_s=new.backoff_base_s,
            dead_letter_retention_s=new.dead_letter_retention_s,
        )

    def release(self) -> None:
        """Drop the claim: ready and dead jobs hold no lease, claimant or token."""
        self.lease_expires_at = None
        self.claimed_by = None
        self.token = None

    def kill(self, last_error: str, now: datetime) -> None:
        """Move to dead at ``now`` (contract D1, R4, X2)."""
        self.state = JobState.DEAD
        self.last_error = last_error
        self.died_at = now
        self.release()

    def snapshot(self) -> Job:
        """The frozen ``Job`` callers get (contract B3)."""
        return Job(
            id=self.id,
            queue=self.queue,
            payload=decode_payload(self.payload_json),
            state=self.state,
            priority=self.priority,
            attempts=self.attempts,
            max_attempts=self.max_attempts,
            run_at=self.run_at,
            expires_at=self.expires_at,
            enqueued_at=self.enqueued_at,
            lease_expires_at=self.lease_expires_at,
            claimed_by=self.claimed_by,
            visibility_timeout_s=self.visibility_timeout_s,
            backoff_base_s=self.backoff_base_s,
            dead_letter_retention_s=self.dead_letter_retention_s,
            last_error=self.last_error,
            died_at=self.died_at,
        )


@dataclass
class Location:
    """Every job of every queue at one location, by id; ids come from one counter, so they grow in enqueue order."""

    jobs: dict[int, StoredJob] = field(default_factory=dict)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


LOCATIONS: dict[str, Location] = {}
"""Every location of this process, by name."""
