"""The in-memory engine's storage driver: the kit's ``StorageDriver`` on a shared ``MemSpace``.

Atomicity (contract C4, E11, X3): no method awaits anything. On one event loop
nothing else runs until a method returns, so each step is atomic with respect
to every other task and every other store on the same space: two claims can
never both take one job, and two sweeps never move one job twice. (The engine
is not thread-safe: use a space from one event-loop thread.) A task that loops
on claims without awaiting anything else keeps the loop to itself.

Every method gets the ``now`` the kit read from the store's clock; this engine
has no clock of its own, so its stores are always opened with one.

Override points for subclasses (the policy the storage applies, kept apart
from the heaps): ``_order_key`` (C2), ``_is_claimable`` (C1, X1, C7), ``_take``
(C3), ``_holds_lease`` (H1), ``_ack_batch_matches`` (B1), ``_hand_back`` and
``_file_lease`` (what retry and release, and claims and heartbeat, leave in the
indexes), and ``_retention_over``/``_expired``/``_lease_exhausted`` (X2, applied
to the jobs the sweep's ``watched`` heap names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from heapq import heapify, heappop

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import Job, JobId
from alkstore_mem.record import (
    ATTEMPTS,
    DEAD,
    DEAD_LETTER_RETENTION_S,
    DIED_AT,
    EXPIRES_AT,
    ID,
    LEASE_EXPIRES_AT,
    MAX_ATTEMPTS,
    PRIORITY,
    PROCESSING,
    READY,
    RUN_AT,
    STATE,
    TOKEN,
    VERSION,
    VISIBILITY_TIMEOUT_S,
    JobRecord,
    as_timedelta,
    given_back,
    killed,
    leased,
    new_record,
    retried,
    snapshot,
    taken,
)
from alkstore_mem.space import MemSpace, QueueIndex, TimedEntry, WatchEntry, c2_key

Settle = Callable[[QueueIndex, JobRecord, datetime], object]
"""A handle op's change to the job its claim holds: the queue's index, the stored job, the op's instant."""
HandBack = Callable[[JobRecord, datetime], JobRecord]
"""What ``retry`` or ``release`` stores for the job a claim held: the job ready again at the instant given."""


def _now(now: datetime | None) -> datetime:
    """The op's instant; the kit always has one for this engine (its stores are opened with a clock)."""
    assert now is not None, "a mem store is always opened with a clock"
    return now


class MemDriver:
    """The jobs of one space, changed one synchronous step at a time."""

    def __init__(self, space: MemSpace) -> None:
        self._space = space

    @property
    def space(self) -> MemSpace:
        """The shared state this driver works on."""
        return self._space

    # --- insert ----------------------------------------------------------------------------------

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """Store every job; nothing here can fail, so a batch is stored whole (E11)."""
        at = _now(now)
        index = self._space.index(queue)
        self._maintain(index, at)
        run_at = jobs.run_at_from(at)
        expires_at = jobs.expires_at_from(at)
        ids: list[JobId] = []
        for payload_json in jobs.payloads:
            job_id = self._space.new_id()
            record = index.jobs[job_id] = new_record(job_id, queue, payload_json, jobs, run_at, expires_at, at)
            if expires_at is not None:
                index.watch(expires_at, job_id)
            if run_at <= at:
                index.file_ready(record, self._order_key(record))
            else:
                index.file_delayed(record)
            ids.append(job_id)
        return ids

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        """K1–K3: the job last stored with the key holds it while it is stored and not dead; else a new one.

        No ``await`` between the check and the insert's own bookkeeping (the
        insert does not yield): one step against every other store.
        """
        holder = self._key_holder(queue, unique_key)
        if holder is not None:
            return holder, False
        return await self._insert_keyed(queue, unique_key, jobs, now), True

    def _key_holder(self, queue: str, unique_key: str) -> JobId | None:
        """The job holding ``unique_key`` in ``queue``, if any (K1, K2).

        Acked and cancelled jobs are gone from the index, and ids are never
        reused, so the space's key map needs no cleanup.
        """
        holder = self._space.keys.get((queue, unique_key))
        if holder is None:
            return None
        record = self._space.index(queue).jobs.get(holder)
        return holder if record is not None and self._holds_key(record) else None

    @staticmethod
    def _holds_key(record: JobRecord) -> bool:
        """K2: a stored job holds its key until it is dead."""
        return bool(record[STATE] != DEAD)

    async def _insert_keyed(self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None) -> JobId:
        """Store the job of ``jobs`` and note it as the key's holder."""
        [job_id] = await self.insert(queue, jobs, now)
        self._space.keys[(queue, unique_key)] = int(job_id)
        return job_id

    # --- claims ----------------------------------------------------------------------------------

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        """Take up to ``n`` jobs in C2 order under ``token``; the whole claim runs without yielding."""
        at = _now(now)
        index = self._space.index(queue)
        self._maintain(index, at)
        self._promote(index, at)
        ready = index.ready
        claimed: list[Job] = []
        while ready and len(claimed) < n:
            record = index.pop_ready()
            if record is None or not self._is_claimable(record, at):
                continue
            claimed.append(snapshot(self._take(index, record, worker_id, token, at)))
        return claimed

    def _promote(self, index: QueueIndex, now: datetime) -> None:
        """Offer to claims every job whose ready time or lease deadline has come.

        Lapsed leases are offered whatever their attempts or expiry: ``_is_claimable``
        is the one place that decides, and what it refuses stays stored for the sweep.
        """
        delayed, leases = index.delayed, index.leases
        while delayed and delayed[0][0] <= now:
            _, job_id, version = heappop(delayed)
            record = index.current(job_id, version)
            if record is not None:
                index.file_ready(record, self._order_key(record))
        while leases and leases[0][0] <= now:
            record = index.pop_lapsed()
            if record is not None:
                index.file_ready(record, self._order_key(record))

    def _order_key(self, record: JobRecord) -> int:
        """contract C2: priority DESC, ready time ASC, enqueue order (id) ASC, packed by ``c2_key``."""
        return c2_key(-record[PRIORITY], record[RUN_AT], record[ID])

    def _is_claimable(self, record: JobRecord, now: datetime) -> bool:
        """contract C1/X1/C7: ready and due, or a lapsed lease with attempts left; never expired.

        ``alkstore_contract.kit.claimable`` says the same of a record with attributes.
        """
        expires_at = record[EXPIRES_AT]
        if expires_at is not None and expires_at <= now:
            return False
        state = record[STATE]
        if state == READY:
            return bool(record[RUN_AT] <= now)
        lease = record[LEASE_EXPIRES_AT]
        return state == PROCESSING and lease is not None and lease <= now and record[ATTEMPTS] < record[MAX_ATTEMPTS]

    def _take(self, index: QueueIndex, record: JobRecord, worker_id: str, token: str, now: datetime) -> JobRecord:
        """contract C3: processing, claimant, lease = now + stamped visibility timeout, attempts + 1."""
        lease = now + as_timedelta(record[VISIBILITY_TIMEOUT_S])
        return self._file_lease(index, taken(record, worker_id, token, lease))

    def _file_lease(self, index: QueueIndex, record: JobRecord) -> JobRecord:
        """Store a job with a new lease, filed for the claims that reclaim it and, on a last attempt, the sweep."""
        index.jobs[record[ID]] = record
        lease = record[LEASE_EXPIRES_AT]
        index.file_lease(record, lease)
        if record[ATTEMPTS] >= record[MAX_ATTEMPTS]:
            index.watch(lease, record[ID])
        return record

    def _maintain(self, index: QueueIndex, now: datetime) -> None:
        """Rebuild the heaps when time went back or stale entries pile up, then note ``now``."""
        if index.needs_rebuild(now):
            self._rebuild(index, now)
        index.high_water = now

    def _rebuild(self, index: QueueIndex, now: datetime) -> None:
        """Re-file every job of the queue from scratch, as of ``now``."""
        ready: list[int] = []
        delayed: list[TimedEntry] = []
        leases: list[TimedEntry] = []
        watched: list[WatchEntry] = []
        for record in index.jobs.values():
            job_id, state, version = record[ID], record[STATE], record[VERSION]
            if state == DEAD:
                retention, died_at = record[DEAD_LETTER_RETENTION_S], record[DIED_AT]
                if retention is not None and died_at is not None:
                    watched.append((died_at + as_timedelta(retention), job_id))
                continue
            if record[EXPIRES_AT] is not None:
                watched.append((record[EXPIRES_AT], job_id))
            lease = record[LEASE_EXPIRES_AT]
            if state == READY:
                if record[RUN_AT] <= now:
                    ready.append(self._order_key(record) << 64 | version)
                else:
                    delayed.append((record[RUN_AT], job_id, version))
            elif state == PROCESSING and lease is not None:
                leases.append((lease, job_id, version))
                if record[ATTEMPTS] >= record[MAX_ATTEMPTS]:
                    watched.append((lease, job_id))
        heapify(ready)
        heapify(delayed)
        heapify(leases)
        heapify(watched)
        index.ready, index.delayed, index.leases, index.watched = ready, delayed, leases, watched
        index.stale_leases.clear()

    # --- the fenced handle ops -------------------------------------------------------------------

    def _held(self, queue: str, job_id: JobId, token: str, now: datetime) -> tuple[QueueIndex, JobRecord] | None:
        """The queue's index and the stored job if the claim ``token`` still holds it at ``now``."""
        index = self._space.index(queue)
        record = index.jobs.get(job_id) if isinstance(job_id, int) else None
        if record is None or not self._holds_lease(record, token, now):
            return None
        return index, record

    def _holds_lease(self, record: JobRecord, token: str, now: datetime) -> bool:
        """contract H1: processing, under this very claim's token, and the lease not yet over."""
        lease = record[LEASE_EXPIRES_AT]
        return record[TOKEN] == token and record[STATE] == PROCESSING and lease is not None and now < lease

    def _fenced(self, queue: str, job_id: JobId, token: str, now: datetime | None, change: Settle) -> bool:
        """A handle op: ``change`` the job at the op's instant if the claim ``token`` still holds it (H1, H5).

        The fence is written once here; each op is only its change. Whether the
        change was made is the op's answer.
        """
        at = _now(now)
        held = self._held(queue, job_id, token, at)
        if held is None:
            return False
        change(*held, at)
        return True

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        return self._fenced(queue, job_id, token, now, self._delete)

    def _delete(self, index: QueueIndex, record: JobRecord, now: datetime) -> None:
        """H2: the acked job is gone, its lease with it."""
        del index.jobs[record[ID]]
        index.lease_dropped(record)

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        """R1: ready again after ``delay_s``, the claim's attempt spent."""
        return self._hand_back(queue, job_id, token, now, delay_s, partial(retried, last_error=last_error))

    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        """L2: ready again after ``delay_s``, the claim's attempt given back."""
        return self._hand_back(queue, job_id, token, now, delay_s, given_back)

    def _hand_back(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, back: HandBack
    ) -> bool:
        """``retry`` and ``release``, which differ only in the stored job ``back`` makes: the claim's lease is over
        and the job is ready again at the op's instant + ``delay_s``, which a claim promotes once due."""

        def file(index: QueueIndex, record: JobRecord, at: datetime) -> None:
            index.lease_dropped(record)
            ready = index.jobs[record[ID]] = back(record, at + timedelta(seconds=delay_s))
            index.file_delayed(ready)

        return self._fenced(queue, job_id, token, now, file)

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        return self._fenced(
            queue,
            job_id,
            token,
            now,
            lambda index, record, at: index.watch_death(self._kill(index, record, last_error, at)),
        )

    def _kill(self, index: QueueIndex, record: JobRecord, last_error: str, now: datetime) -> JobRecord:
        """Store the job as dead at ``now`` with ``last_error``."""
        index.lease_dropped(record)
        record = index.jobs[record[ID]] = killed(record, last_error, now)
        return record

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        """H3: an absolute reset from now, never an addition to the old deadline."""

        def renew(index: QueueIndex, record: JobRecord, at: datetime) -> None:
            index.lease_dropped(record)
            self._file_lease(index, leased(record, at + as_timedelta(lease_s)))

        return self._fenced(queue, job_id, token, now, renew)

    # --- batch ack, cancel, get ------------------------------------------------------------------

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        at = _now(now)
        index = self._space.index(queue)
        jobs = index.jobs
        acked = 0
        for job_id in job_ids:
            record = jobs.get(job_id) if isinstance(job_id, int) else None
            if record is not None and self._ack_batch_matches(record, at):
                del jobs[record[ID]]
                index.lease_dropped(record)
                acked += 1
        return acked

    def _ack_batch_matches(self, record: JobRecord, now: datetime) -> bool:
        """B1: processing with an unexpired lease; no worker or token check."""
        lease = record[LEASE_EXPIRES_AT]
        return record[STATE] == PROCESSING and lease is not None and now < lease

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        index = self._space.index(queue)
        record = index.jobs.pop(job_id, None) if isinstance(job_id, int) else None
        if record is None:
            return False
        index.lease_dropped(record)
        return True

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        record = self._space.index(queue).jobs.get(job_id) if isinstance(job_id, int) else None
        return None if record is None else snapshot(record)

    # --- sweep -----------------------------------------------------------------------------------

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """X2 in one pass over the jobs whose watched instant has come, each once, retention first.

        Only those jobs are looked at (see ``alkstore_mem.space``), so a job
        this sweep moves to dead is kept until a later sweep.
        """
        at = _now(now)
        index = self._space.index(queue)
        self._maintain(index, at)
        jobs, watched = index.jobs, index.watched
        due: set[int] = set()
        while watched and watched[0][0] <= at:
            due.add(heappop(watched)[1])
        moved = 0
        for job_id in sorted(due):
            record = jobs.get(job_id)
            if record is None:
                continue
            if self._retention_over(record, at):
                del jobs[job_id]
                continue
            if self._expired(record, at):
                error = expired_error
            elif self._lease_exhausted(record, at):
                error = exhausted_error
            else:
                continue
            index.watch_death(self._kill(index, record, error, at))
            moved += 1
        return moved

    def _retention_over(self, record: JobRecord, now: datetime) -> bool:
        """Dead, with a retention, and died_at + retention <= now."""
        retention, died_at = record[DEAD_LETTER_RETENTION_S], record[DIED_AT]
        return (
            record[STATE] == DEAD
            and retention is not None
            and died_at is not None
            and died_at + as_timedelta(retention) <= now
        )

    def _expired(self, record: JobRecord, now: datetime) -> bool:
        """Live (ready or processing) with expires_at <= now."""
        expires_at = record[EXPIRES_AT]
        return record[STATE] != DEAD and expires_at is not None and expires_at <= now

    def _lease_exhausted(self, record: JobRecord, now: datetime) -> bool:
        """Processing, lease lapsed, and no attempt left (C7)."""
        lease = record[LEASE_EXPIRES_AT]
        return (
            record[STATE] == PROCESSING
            and lease is not None
            and lease <= now
            and record[ATTEMPTS] >= record[MAX_ATTEMPTS]
        )

    async def close(self) -> None:
        """Nothing to release: the space and the other stores on it live on (S3)."""
