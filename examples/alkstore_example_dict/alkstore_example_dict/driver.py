"""The example engine: the kit's ``StorageDriver`` over one plain ``dict`` of jobs per location.

This module is the whole engine; copy it to start yours. The kit
(``alkstore_contract.kit``) implements the public surface once for every engine:
closed stores, argument checks, payload encoding, option and retry resolution,
the clock read, claim tokens, one-shot handles. What it leaves to a driver is
storage: put jobs in, take them out in order, and change a job only while the
claim that took it still holds it. Each method below says what it must
guarantee, citing docs/contract.md; ``alkstore_contract.kit.StorageDriver`` is
the protocol it matches.

Atomicity (C4, E11, X3): no method awaits, and asyncio runs one task at a time,
so nothing runs between looking at a job and changing it. A database engine
gets the same from one statement or transaction per method. Cost: claims and
sweeps scan the whole location (O(n)); ``alkstore_mem`` keeps heaps instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from alkstore_contract.kit import NewJobs, c2_order_key, claimable
from alkstore_contract.types import Job, JobId, JobState
from alkstore_contract.validation import decode_payload


@dataclass
class Row:
    """One stored job: the ``Job`` as the contract describes it, its payload's JSON text, its claim's token.

    ``job.payload`` stays ``None`` here: each snapshot decodes ``payload_json``
    afresh, so a caller mutating ``Job.payload`` never changes the stored job (B3).
    """

    job: Job
    payload_json: str
    token: str | None = None

    def snapshot(self) -> Job:
        """The job as a caller sees it (B3): a fresh ``Job`` with a fresh payload."""
        return replace(self.job, payload=decode_payload(self.payload_json))

    def settle(self, job: Job) -> None:
        """Store ``job`` and drop the claim: a ready or dead job holds no lease, claimant or token (R1, D1)."""
        self.job, self.token = replace(job, lease_expires_at=None, claimed_by=None), None

    def leased(self, now: datetime) -> bool:
        """Processing under a lease not yet over at ``now``: ``now < lease_expires_at`` (H1, B1)."""
        lease = self.job.lease_expires_at
        return self.job.state is JobState.PROCESSING and lease is not None and now < lease


@dataclass
class Location:
    """Every job of every queue at one location, by id; one counter, so ids grow in enqueue order (C2's last key)."""

    rows: dict[JobId, Row] = field(default_factory=dict)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


LOCATIONS: dict[str, Location] = {}
"""Every location of this process, by name: what the adapter creates, opens, counts and drops."""


class DictDriver:
    """The jobs of one location. Every store opened on the location gets a driver on the same ``Location`` (P1).

    This engine keeps no clock of its own, so the adapter opens every store
    with one and ``now`` is never ``None`` here (T2): each method asserts it.
    """

    def __init__(self, location: Location) -> None:
        self.location = location

    def _row(self, queue: str, job_id: JobId) -> Row | None:
        """The row of ``queue`` with this id; an id of another kind (a ``str``, a huge int) is simply not found."""
        row = self.location.rows.get(job_id)
        return row if row is not None and row.job.queue == queue else None

    def _fenced(self, queue: str, job_id: JobId, token: str, now: datetime, change: Callable[[Row], object]) -> bool:
        """The fence of every handle op (H1): ``change`` the row only if the claim ``token`` holds it, leased.

        Returns whether it did: the op's answer. A job reclaimed after its lease
        lapsed has a new token, so an old handle changes nothing (H5). Expiry is
        no part of the fence: only claims and sweeps look at ``expires_at``.
        """
        row = self._row(queue, job_id)
        if row is None or row.token != token or not row.leased(now):
            return False
        change(row)
        return True

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """Store one ready job per payload, every stamp as ``jobs`` resolved it; ids in input order (E1–E8, E11).

        Nothing below can fail part way, so a batch is stored whole (E11).
        """
        assert now is not None
        run_at, expires_at = jobs.run_at_from(now), jobs.expires_at_from(now)
        ids: list[JobId] = []
        for payload_json in jobs.payloads:
            job_id = next(self.location.ids)
            job = Job(
                id=job_id,
                queue=queue,
                payload=None,
                state=JobState.READY,
                priority=jobs.priority,
                attempts=0,
                max_attempts=jobs.max_attempts,
                run_at=run_at,
                expires_at=expires_at,
                enqueued_at=now,
                lease_expires_at=None,
                claimed_by=None,
                visibility_timeout_s=jobs.visibility_timeout_s,
                backoff_base_s=jobs.backoff_base_s,
                dead_letter_retention_s=jobs.dead_letter_retention_s,
                last_error=None,
                died_at=None,
            )
            self.location.rows[job_id] = Row(job, payload_json)
            ids.append(job_id)
        return ids

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        """Take the first ``n`` claimable jobs of ``queue`` in C2 order under ``token`` (C1–C5, X1, C7).

        Each taken job becomes processing, held by ``worker_id`` under the
        claim's token, one more attempt, leased until now + its stamped
        visibility timeout (C3). Finding and taking is one step (C4).
        """
        assert now is not None
        rows = [row for row in self.location.rows.values() if row.job.queue == queue and claimable(row.job, now)]
        taken = sorted(rows, key=lambda row: c2_order_key(row.job))[:n]
        for row in taken:
            job = row.job
            lease = now + timedelta(seconds=job.visibility_timeout_s)
            row.job = replace(
                job, state=JobState.PROCESSING, claimed_by=worker_id, attempts=job.attempts + 1, lease_expires_at=lease
            )
            row.token = token
        return [row.snapshot() for row in taken]

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        """Delete the job if the claim still holds it (H1, H2); the fence and the delete are one step."""
        assert now is not None
        return self._fenced(queue, job_id, token, now, lambda row: self.location.rows.pop(row.job.id))

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        """Under the fence: ready at now + ``delay_s``, attempts kept, ``last_error`` replaced unless ``None`` (R1–R3).

        The kit already chose the delay and whether the job dies instead (R4).
        """
        assert now is not None
        run_at = now + timedelta(seconds=delay_s)

        def ready_again(row: Row) -> None:
            error = row.job.last_error if last_error is None else last_error
            row.settle(replace(row.job, state=JobState.READY, run_at=run_at, last_error=error))

        return self._fenced(queue, job_id, token, now, ready_again)

    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        """Under the fence: ready at now + ``delay_s`` with the claim's attempt given back (L1–L3).

        Only for an engine declaring the ``release`` capability (contract 2.1); ``last_error`` is kept.
        """
        assert now is not None
        run_at = now + timedelta(seconds=delay_s)

        def handed_back(row: Row) -> None:
            row.settle(replace(row.job, state=JobState.READY, run_at=run_at, attempts=row.job.attempts - 1))

        return self._fenced(queue, job_id, token, now, handed_back)

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        """Under the fence: dead now with ``last_error`` (R4, D1); the claim is dropped."""
        assert now is not None
        died_at = now

        def dead(row: Row) -> None:
            row.settle(replace(row.job, state=JobState.DEAD, last_error=last_error, died_at=died_at))

        return self._fenced(queue, job_id, token, now, dead)

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        """Under the fence: lease until now + ``lease_s``, a reset from now, not an addition to the old lease (H3)."""
        assert now is not None
        lease = now + timedelta(seconds=lease_s)

        def renewed(row: Row) -> None:
            row.job = replace(row.job, lease_expires_at=lease)

        return self._fenced(queue, job_id, token, now, renewed)

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        """Delete each listed job of ``queue`` that is processing under a live lease, whoever holds it (B1)."""
        assert now is not None
        acked = 0
        for job_id in job_ids:
            row = self._row(queue, job_id)
            if row is not None and row.leased(now):
                del self.location.rows[row.job.id]
                acked += 1
        return acked

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        """Delete the job of ``queue`` in whatever state it is (B2)."""
        row = self._row(queue, job_id)
        if row is None:
            return False
        del self.location.rows[row.job.id]
        return True

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        """A fresh snapshot of the job of ``queue``, or ``None`` (B3)."""
        row = self._row(queue, job_id)
        return None if row is None else row.snapshot()

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """X2, X3, one look per job: purge dead jobs past retention, else expire live ones, else bury exhausted ones.

        Because each job is looked at once, a job this sweep moves to dead is
        kept until a later sweep, even with a retention of 0. Returns how many
        jobs moved to dead.
        """
        assert now is not None
        moved = 0
        for row in [row for row in self.location.rows.values() if row.job.queue == queue]:
            job, lease, keep_s = row.job, row.job.lease_expires_at, row.job.dead_letter_retention_s
            if job.state is JobState.DEAD:
                if keep_s is not None and job.died_at is not None and job.died_at + timedelta(seconds=keep_s) <= now:
                    del self.location.rows[job.id]
            elif job.expires_at is not None and job.expires_at <= now:
                row.settle(replace(job, state=JobState.DEAD, last_error=expired_error, died_at=now))
                moved += 1
            elif lease is not None and lease <= now and job.attempts >= job.max_attempts:
                row.settle(replace(job, state=JobState.DEAD, last_error=exhausted_error, died_at=now))
                moved += 1
        return moved

    async def close(self) -> None:
        """Nothing to release: the location, and every other store on it, live on (S3)."""
