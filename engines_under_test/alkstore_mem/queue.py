"""A queue of the in-memory engine: enqueue, claims, batch ack, cancel, get_job, sweep.

Atomicity (SPEC C4, E11, X3): every coroutine here validates its input, reads
the clock once, then changes the shared space in plain synchronous code with
no ``await`` in between. On one event loop nothing else runs until that code
returns, so each op is atomic with respect to every other task and every other
store on the same space: two claims can never both take one job, and two sweeps
never move one job twice. (The engine is not thread-safe: use a space from one
event-loop thread.) The ops never suspend either, so a task that loops on
claims without awaiting anything else keeps the loop to itself.

Override points for subclasses (the policy, kept apart from the storage):
``_order_key`` (C2), ``_is_claimable`` (C1, X1, C7), ``_take`` (C3),
``_ack_batch_matches`` (B1), ``_retention_over``/``_expired``/``_lease_exhausted``
(X2: applied to the jobs the sweep's ``watched`` heap names), ``_insert`` (E11), and ``handle_class``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from heapq import heapify, heappop
from typing import TYPE_CHECKING

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.handles import raise_if_closed
from alkstore_contract.instants import to_epoch_us
from alkstore_contract.resolution import (
    LAST_ERROR_EXPIRED,
    LAST_ERROR_MAX_ATTEMPTS,
    EnqueueOptions,
    NewJob,
    encode_payloads,
    resolve_new_job,
)
from alkstore_contract.surface import JobHandle
from alkstore_contract.types import Job, JobState, QueueOpts
from alkstore_contract.validation import (
    Duration,
    JobId,
    encode_payload,
    validate_batch_size,
    validate_job_id,
    validate_job_ids,
    validate_worker_id,
)
from alkstore_mem.handle import MemJobHandle
from alkstore_mem.record import JobRecord, as_timedelta, snapshot
from alkstore_mem.space import OrderKey, QueueIndex, ReadyEntry, TimedEntry, WatchEntry

if TYPE_CHECKING:
    from alkstore_mem.store import MemStore


class MemQueue:
    """A name inside a store, with the options it stamps on what it enqueues (SPEC E1)."""

    handle_class: type[MemJobHandle] = MemJobHandle

    def __init__(self, store: MemStore, name: str, opts: QueueOpts) -> None:
        self._store = store
        self._name = name
        self._opts = opts
        self._index = store.space.index(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def opts(self) -> QueueOpts:
        return self._opts

    @property
    def store(self) -> MemStore:
        return self._store

    @property
    def index(self) -> QueueIndex:
        """This queue's jobs and heaps in the shared space."""
        return self._index

    # --- enqueue ---------------------------------------------------------------------------------

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
        """Store one job and return its id (SPEC E1–E10); bad input stores nothing."""
        raise_if_closed(self._store.closed, "enqueue")
        payload_json = encode_payload(payload)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        now = self._store.clock.now()
        return self._insert([resolve_new_job(payload_json, options, self._opts, now)], now)[0]

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
        """Store every payload from one clock read, all or none (SPEC E11); ids in input order."""
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
        ids: list[JobId] = list(
            self._insert([resolve_new_job(text, options, self._opts, now) for text in payload_jsons], now)
        )
        return ids

    def _insert(self, jobs: Sequence[NewJob], now: datetime) -> list[int]:
        """Store resolved jobs. Nothing here can fail, so a batch is stored whole (E11)."""
        self._maintain(now)
        index = self._index
        space = self._store.space
        ids: list[int] = []
        for new in jobs:
            record = JobRecord(
                job_id=space.new_id(),
                queue=self._name,
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
            index.jobs[record.id] = record
            if record.expires_at is not None:
                index.watch(record.expires_at, record.id)
            if record.run_at <= now:
                index.file_ready(record, self._order_key(record))
            else:
                index.file_delayed(record)
            ids.append(record.id)
        return ids

    # --- claims ----------------------------------------------------------------------------------

    async def claim_one(self, worker_id: str) -> MemJobHandle | None:
        """The first claimable job in C2 order under a fresh lease, or ``None``."""
        raise_if_closed(self._store.closed, "claim_one")
        validate_worker_id(worker_id)
        handles = self._claim(worker_id, 1)
        return handles[0] if handles else None

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """Up to ``n`` claimable jobs in C2 order; ``n <= 0`` claims nothing and reads nothing (C5)."""
        raise_if_closed(self._store.closed, "claim_batch")
        validate_worker_id(worker_id)
        if validate_batch_size(n) <= 0:
            return []
        handles: list[JobHandle] = list(self._claim(worker_id, n))
        return handles

    def _claim(self, worker_id: str, n: int) -> list[MemJobHandle]:
        """Take up to ``n`` jobs, in order, under one token; the whole claim runs without yielding."""
        now = self._store.clock.now()
        self._maintain(now)
        index = self._index
        self._promote(index.delayed, now)
        self._promote(index.leases, now)
        ready = index.ready
        token = self._store.space.new_token()
        handles: list[MemJobHandle] = []
        while ready and len(handles) < n:
            entry = heappop(ready)
            record = index.current(entry[-2], entry[-1])
            if record is None or not self._is_claimable(record, now):
                continue
            self._take(record, worker_id, token, now)
            handles.append(self.handle_class(self, record, token))
        return handles

    def _promote(self, heap: list[TimedEntry], now: datetime) -> None:
        """Offer to claims every job whose instant in ``heap`` (ready time, or lease deadline) has come.

        Lapsed leases are offered whatever their attempts or expiry: ``_is_claimable``
        is the one place that decides, and what it refuses stays stored for the sweep.
        """
        index = self._index
        while heap and heap[0][0] <= now:
            _, job_id, version = heappop(heap)
            record = index.current(job_id, version)
            if record is not None:
                index.file_ready(record, self._order_key(record))

    def _order_key(self, record: JobRecord) -> OrderKey:
        """SPEC C2: priority DESC, ready time ASC, enqueue order (id) ASC.

        The ready time goes in as integer microseconds (exact): every claim pops
        the ready heap, some 17 tuple comparisons deep on a 100k backlog, and
        ints compare faster than aware datetimes.
        """
        return (-record.priority, to_epoch_us(record.run_at), record.id)

    def _is_claimable(self, record: JobRecord, now: datetime) -> bool:
        """SPEC C1/X1/C7: ready and due, or a lapsed lease with attempts left; never expired."""
        if record.expires_at is not None and record.expires_at <= now:
            return False
        if record.state is JobState.READY:
            return record.run_at <= now
        lease = record.lease_expires_at
        return (
            record.state is JobState.PROCESSING
            and lease is not None
            and lease <= now
            and record.attempts < record.max_attempts
        )

    def _take(self, record: JobRecord, worker_id: str, token: int, now: datetime) -> None:
        """SPEC C3: processing, claimant, lease = now + stamped visibility timeout, attempts + 1."""
        lease = now + as_timedelta(record.visibility_timeout_s)
        record.state = JobState.PROCESSING
        record.claimed_by = worker_id
        record.token = token
        record.lease_expires_at = lease
        record.attempts += 1
        record.version += 1
        self._index.file_lease(record, lease)
        if record.attempts >= record.max_attempts:
            self._index.watch(lease, record.id)

    def _maintain(self, now: datetime) -> None:
        """Rebuild the heaps when time went back or stale entries pile up, then note ``now``."""
        if self._index.needs_rebuild(now):
            self._rebuild(now)
        self._index.high_water = now

    def _rebuild(self, now: datetime) -> None:
        """Re-file every job of the queue from scratch, as of ``now``."""
        index = self._index
        ready: list[ReadyEntry] = []
        delayed: list[TimedEntry] = []
        leases: list[TimedEntry] = []
        watched: list[WatchEntry] = []
        for record in index.jobs.values():
            if record.state is JobState.DEAD:
                retention = record.dead_letter_retention_s
                if retention is not None and record.died_at is not None:
                    watched.append((record.died_at + as_timedelta(retention), record.id))
                continue
            if record.expires_at is not None:
                watched.append((record.expires_at, record.id))
            if record.state is JobState.READY:
                if record.run_at <= now:
                    ready.append((*self._order_key(record), record.id, record.version))
                else:
                    delayed.append((record.run_at, record.id, record.version))
            elif record.state is JobState.PROCESSING and record.lease_expires_at is not None:
                leases.append((record.lease_expires_at, record.id, record.version))
                if record.attempts >= record.max_attempts:
                    watched.append((record.lease_expires_at, record.id))
        heapify(ready)
        heapify(delayed)
        heapify(leases)
        heapify(watched)
        index.ready, index.delayed, index.leases, index.watched = ready, delayed, leases, watched

    # --- batch ack, cancel, get_job ----------------------------------------------------------------

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """Delete each listed job of this queue that is processing under an unexpired lease (B1)."""
        raise_if_closed(self._store.closed, "ack_batch")
        wanted = set(validate_job_ids(ids))
        if not wanted:
            return 0
        now = self._store.clock.now()
        jobs = self._index.jobs
        acked = 0
        for job_id in wanted:
            record = self._lookup(job_id)
            if record is not None and self._ack_batch_matches(record, now):
                del jobs[record.id]
                acked += 1
        return acked

    def _ack_batch_matches(self, record: JobRecord, now: datetime) -> bool:
        """B1 / decision 6: processing with an unexpired lease; no worker or token check."""
        lease = record.lease_expires_at
        return record.state is JobState.PROCESSING and lease is not None and now < lease

    async def cancel(self, job_id: JobId) -> bool:
        """Delete the job of this queue in any state; True iff one was deleted (B2)."""
        raise_if_closed(self._store.closed, "cancel")
        record = self._lookup(validate_job_id(job_id))
        if record is None:
            return False
        del self._index.jobs[record.id]
        return True

    async def get_job(self, job_id: JobId) -> Job | None:
        """A snapshot of the job of this queue, payload decoded afresh, or ``None`` (B3)."""
        raise_if_closed(self._store.closed, "get_job")
        record = self._lookup(validate_job_id(job_id))
        return None if record is None else snapshot(record)

    def _lookup(self, job_id: JobId) -> JobRecord | None:
        """The job of this queue with that id; a str id is of the wrong kind here, so never found (decision 7)."""
        return self._index.jobs.get(job_id) if isinstance(job_id, int) else None

    # --- sweep -----------------------------------------------------------------------------------

    async def sweep_expired(self) -> int:
        """Decision 8 in one pass: drop dead jobs past retention, then move expired and exhausted jobs to dead.

        Only the jobs whose watched instant has come are looked at (see
        ``alkstore_mem.space``), each once, retention first, so a job this sweep
        moves to dead is kept until a later sweep. Returns how many moved to dead (X2).
        """
        raise_if_closed(self._store.closed, "sweep_expired")
        now = self._store.clock.now()
        self._maintain(now)
        index = self._index
        jobs, watched = index.jobs, index.watched
        due: set[int] = set()
        while watched and watched[0][0] <= now:
            due.add(heappop(watched)[1])
        moved = 0
        for job_id in sorted(due):
            record = jobs.get(job_id)
            if record is None:
                continue
            if self._retention_over(record, now):
                del jobs[record.id]
            elif self._expired(record, now):
                record.kill(LAST_ERROR_EXPIRED, now)
                index.watch_death(record)
                moved += 1
            elif self._lease_exhausted(record, now):
                record.kill(LAST_ERROR_MAX_ATTEMPTS, now)
                index.watch_death(record)
                moved += 1
        return moved

    def _retention_over(self, record: JobRecord, now: datetime) -> bool:
        """Dead, with a retention, and died_at + retention <= now."""
        retention = record.dead_letter_retention_s
        return (
            record.state is JobState.DEAD
            and retention is not None
            and record.died_at is not None
            and record.died_at + as_timedelta(retention) <= now
        )

    def _expired(self, record: JobRecord, now: datetime) -> bool:
        """Live (ready or processing) with expires_at <= now."""
        return record.state is not JobState.DEAD and record.expires_at is not None and record.expires_at <= now

    def _lease_exhausted(self, record: JobRecord, now: datetime) -> bool:
        """Processing, lease lapsed, and no attempt left (C7)."""
        lease = record.lease_expires_at
        return (
            record.state is JobState.PROCESSING
            and lease is not None
            and lease <= now
            and record.attempts >= record.max_attempts
        )
