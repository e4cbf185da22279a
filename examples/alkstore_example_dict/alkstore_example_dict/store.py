"""The example engine: a store, its queues and their claim handles, over one ``dict`` of jobs.

Everything the contract computes is computed by ``alkstore_contract``: argument
checks (``validation``), how enqueue options and retries resolve
(``resolution``, which also draws the backoff jitter), one-shot handles and
closed stores (``handles``). What is left to an engine is storage and
atomicity, and that is all this module does.

Atomicity: every operation checks its arguments, reads the clock once, then
reads and changes the location's ``dict`` in plain synchronous code with no
``await`` in between. asyncio runs one task at a time, so no other claim,
sweep or handle op can run between the moment an op looks at a job and the
moment it changes it. That alone gives exactly-once claims (contract C4) and
sweeps that move each job once (X3), for every store on the location in this
process. (Not thread-safe: use a location from one event loop at a time.)

Cost: a claim scans every job of the location, an O(n) scan per claim.
That keeps the example short; ``alkstore_mem`` shows heap indexes that don't
scan.
"""

from __future__ import annotations

import heapq
import random
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Self

from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.handles import OneShot, raise_if_closed
from alkstore_contract.resolution import (
    LAST_ERROR_EXPIRED,
    LAST_ERROR_MAX_ATTEMPTS,
    EnqueueOptions,
    NewJob,
    encode_payloads,
    fail_error,
    resolve_new_job,
    resolve_retry,
)
from alkstore_contract.surface import JobHandle
from alkstore_contract.types import Job, JobState, QueueOpts, validate_queue_opts
from alkstore_contract.validation import (
    Duration,
    JobId,
    encode_payload,
    optional_duration_seconds,
    validate_batch_size,
    validate_error,
    validate_job_id,
    validate_job_ids,
    validate_queue_name,
    validate_worker_id,
)

from .location import Location, StoredJob


class DictJobHandle:
    """One claim of one job. Every op is fenced to this claim by its token (contract H1).

    The order inside each op matters: closed store, then spent handle, then
    argument checks, then spend the handle (ack/retry/fail only), then the
    fenced change. An op whose claim no longer holds the job returns ``False``.
    """

    def __init__(self, queue: DictQueue, job: StoredJob, token: str) -> None:
        self._queue = queue
        self._job_id = job.id
        self._job = job.snapshot()
        self._token = token
        self._once = OneShot(job.id)

    @property
    def job(self) -> Job:
        """The job right after the claim."""
        return self._job

    def _held(self, now: datetime) -> StoredJob | None:
        """The stored job if this very claim still holds it at ``now`` (contract H1), else ``None``."""
        job = self._queue.store.location.jobs.get(self._job_id)
        if job is None or job.token != self._token or job.state is not JobState.PROCESSING:
            return None
        return job if job.lease_expires_at is not None and now < job.lease_expires_at else None

    async def ack(self) -> bool:
        """Delete the job (H2)."""
        store = self._queue.store
        raise_if_closed(store.closed, "ack")
        self._once.spend("ack")
        job = self._held(store.clock.now())
        if job is None:
            return False
        del store.location.jobs[job.id]
        return True

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """Ready again after ``delay`` or the backoff curve, or dead when no attempt is left (R1–R4)."""
        store = self._queue.store
        raise_if_closed(store.closed, "retry")
        self._once.check("retry")
        checked_error = validate_error(error)
        delay_s = optional_duration_seconds("delay", delay)
        self._once.spend("retry")
        now = store.clock.now()
        job = self._held(now)
        if job is None:
            return False
        outcome = resolve_retry(
            attempts=job.attempts,
            max_attempts=job.max_attempts,
            backoff_base_s=job.backoff_base_s,
            error=checked_error,
            delay_s=delay_s,
            now=now,
            rng=store.rng,
        )
        if outcome.run_at is None:  # R4: no attempt left, so dead, with the error resolve_retry chose
            job.kill(LAST_ERROR_MAX_ATTEMPTS if outcome.last_error is None else outcome.last_error, now)
            return True
        job.state = JobState.READY
        job.run_at = outcome.run_at
        if outcome.last_error is not None:
            job.last_error = outcome.last_error
        job.release()
        return True

    async def fail(self, error: str | None = None) -> bool:
        """Dead at once, ``last_error`` = error or ``"failed"`` (D1)."""
        store = self._queue.store
        raise_if_closed(store.closed, "fail")
        self._once.check("fail")
        checked_error = validate_error(error)
        self._once.spend("fail")
        now = store.clock.now()
        job = self._held(now)
        if job is None:
            return False
        job.kill(fail_error(checked_error), now)
        return True

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """Lease = now + ``extend`` (or the stamped visibility timeout): a reset, not an addition (H3)."""
        store = self._queue.store
        raise_if_closed(store.closed, "heartbeat")
        self._once.check("heartbeat")
        extend_s = optional_duration_seconds("extend", extend, positive=True)
        now = store.clock.now()
        job = self._held(now)
        if job is None:
            return False
        seconds = extend_s if extend_s is not None else job.visibility_timeout_s
        job.lease_expires_at = now + timedelta(seconds=seconds)
        return True


class DictQueue:
    """A queue name inside a store, with the options it stamps on what it enqueues (E1)."""

    handle_class: type[DictJobHandle] = DictJobHandle

    def __init__(self, store: DictStore, name: str, opts: QueueOpts) -> None:
        self._store = store
        self._name = name
        self._opts = opts

    @property
    def name(self) -> str:
        return self._name

    @property
    def opts(self) -> QueueOpts:
        return self._opts

    @property
    def store(self) -> DictStore:
        return self._store

    def _jobs(self) -> list[StoredJob]:
        """Every job of this queue (a copy of the list, so an op may delete while it walks it)."""
        return [job for job in self._store.location.jobs.values() if job.queue == self._name]

    def _find(self, job_id: JobId) -> StoredJob | None:
        """The job of this queue with that id; a str id is of the wrong kind here, so it is never found."""
        job = self._store.location.jobs.get(job_id) if isinstance(job_id, int) else None
        return job if job is not None and job.queue == self._name else None

    async def enqueue(
        self,
        payload: object,
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        max_attempts: int | None = None,
        priority: int = 0,
    ) -> int:
        """Store one job (E1–E10). Everything is checked before anything is stored."""
        raise_if_closed(self._store.closed, "enqueue")
        payload_json = encode_payload(payload)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        now = self._store.clock.now()
        return self._insert([resolve_new_job(payload_json, options, self._opts, now)])[0]

    async def enqueue_many(
        self,
        payloads: Sequence[object],
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        max_attempts: int | None = None,
        priority: int = 0,
    ) -> list[JobId]:
        """Store every payload from one clock read, all or none (E11): nothing can fail after the checks."""
        raise_if_closed(self._store.closed, "enqueue_many")
        if not isinstance(payloads, list | tuple):
            raise InvalidArgument(f"payloads={type(payloads).__name__}: must be a list or tuple of payloads")
        payload_jsons = encode_payloads(payloads)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        if not payload_jsons:
            return []
        now = self._store.clock.now()
        return list(self._insert([resolve_new_job(text, options, self._opts, now) for text in payload_jsons]))

    def _insert(self, new_jobs: Sequence[NewJob]) -> list[int]:
        location = self._store.location
        ids: list[int] = []
        for new in new_jobs:
            job = StoredJob.from_new(next(location.ids), self._name, new)
            location.jobs[job.id] = job
            ids.append(job.id)
        return ids

    async def claim_one(self, worker_id: str) -> DictJobHandle | None:
        """The first claimable job in C2 order under a fresh lease, or ``None``."""
        raise_if_closed(self._store.closed, "claim_one")
        validate_worker_id(worker_id)
        handles = self._claim(worker_id, 1)
        return handles[0] if handles else None

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """Up to ``n`` jobs in C2 order; ``n <= 0`` returns ``[]`` without looking at the jobs (C5)."""
        raise_if_closed(self._store.closed, "claim_batch")
        validate_worker_id(worker_id)
        if validate_batch_size(n) <= 0:
            return []
        handles: list[JobHandle] = list(self._claim(worker_id, n))
        return handles

    @staticmethod
    def _claimable(job: StoredJob, now: datetime) -> bool:
        """C1, X1, C7: due and ready, or a lapsed lease with an attempt left; never when expired."""
        if job.expires_at is not None and job.expires_at <= now:
            return False
        if job.state is JobState.READY:
            return job.run_at <= now
        lease = job.lease_expires_at
        return (
            job.state is JobState.PROCESSING and lease is not None and lease <= now and job.attempts < job.max_attempts
        )

    def _claim(self, worker_id: str, n: int) -> list[DictJobHandle]:
        """C2 order is priority DESC, ready time ASC, id ASC; C3 is what a claim writes."""
        now = self._store.clock.now()
        candidates = (job for job in self._jobs() if self._claimable(job, now))
        chosen = heapq.nsmallest(n, candidates, key=lambda job: (-job.priority, job.run_at, job.id))
        token = uuid.uuid4().hex
        for job in chosen:
            job.state = JobState.PROCESSING
            job.claimed_by = worker_id
            job.token = token
            job.lease_expires_at = now + timedelta(seconds=job.visibility_timeout_s)
            job.attempts += 1
        return [self.handle_class(self, job, token) for job in chosen]

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """Delete each listed job of this queue held under an unexpired lease, by anyone (B1)."""
        raise_if_closed(self._store.closed, "ack_batch")
        wanted = set(validate_job_ids(ids))
        now = self._store.clock.now()
        acked = 0
        for job_id in wanted:
            job = self._find(job_id)
            lease = job.lease_expires_at if job is not None else None
            if job is not None and job.state is JobState.PROCESSING and lease is not None and now < lease:
                del self._store.location.jobs[job.id]
                acked += 1
        return acked

    async def cancel(self, job_id: JobId) -> bool:
        """Delete the job of this queue in any state (B2)."""
        raise_if_closed(self._store.closed, "cancel")
        job = self._find(validate_job_id(job_id))
        if job is None:
            return False
        del self._store.location.jobs[job.id]
        return True

    async def get_job(self, job_id: JobId) -> Job | None:
        """A snapshot, or ``None`` (B3)."""
        raise_if_closed(self._store.closed, "get_job")
        job = self._find(validate_job_id(job_id))
        return None if job is None else job.snapshot()

    async def sweep_expired(self) -> int:
        """X2, in this order per job: purge dead jobs past retention, expire live ones, bury exhausted leases.

        A job this sweep moves to dead is therefore kept until a later sweep.
        Returns how many jobs moved to dead.
        """
        raise_if_closed(self._store.closed, "sweep_expired")
        now = self._store.clock.now()
        moved = 0
        for job in self._jobs():
            lease = job.lease_expires_at
            if job.state is JobState.DEAD:
                if self._past_retention(job, now):
                    del self._store.location.jobs[job.id]
            elif job.expires_at is not None and job.expires_at <= now:
                job.kill(LAST_ERROR_EXPIRED, now)
                moved += 1
            elif lease is not None and lease <= now and job.attempts >= job.max_attempts:
                job.kill(LAST_ERROR_MAX_ATTEMPTS, now)
                moved += 1
        return moved

    @staticmethod
    def _past_retention(job: StoredJob, now: datetime) -> bool:
        """A dead job goes once died_at + its stamped retention <= now; retention ``None`` keeps it forever."""
        retention = job.dead_letter_retention_s
        return retention is not None and job.died_at is not None and job.died_at + timedelta(seconds=retention) <= now


class DictStore:
    """An open store on one location: its own clock, random source and closed flag; the jobs are the location's."""

    queue_class: type[DictQueue] = DictQueue

    def __init__(self, location: Location, *, clock: Clock | None = None, seed: int | None = None) -> None:
        self._location = location
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._rng = random.Random(seed)
        self._closed = False

    @property
    def location(self) -> Location:
        return self._location

    @property
    def clock(self) -> Clock:
        """Read once per op, and the only time source (so the engine may declare ``injectable_clock``, T2)."""
        return self._clock

    @property
    def rng(self) -> random.Random:
        """The backoff jitter's source, seeded by ``open_store(seed=...)`` so a run replays (R5)."""
        return self._rng

    @property
    def closed(self) -> bool:
        return self._closed

    def queue(self, name: str, opts: QueueOpts | None = None) -> DictQueue:
        """A queue handle; checks its arguments and touches no job (S1)."""
        raise_if_closed(self._closed, "queue()")
        validate_queue_name(name)
        return self.queue_class(self, name, validate_queue_opts(opts))

    async def close(self) -> None:
        """Idempotent; other stores on the location stay open (S3)."""
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
