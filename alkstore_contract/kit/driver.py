"""The storage driver: the one thing an engine built on the kit writes (docs/certify-your-engine.md).

Part of the kit.

The kit (``alkstore_contract.kit.front``) implements the whole public surface
once: it refuses ops on a closed store, validates every argument, encodes
payloads, resolves options and the retry outcome, reads the clock, mints claim
tokens, keeps handles one-shot and sorts claims into C2 order. What it leaves
to the driver is what only the storage can do, atomically: put rows in, take
them out, and change one row *only if* the claim still holds it. So a driver
takes no policy decision the contract does not pin to the storage itself; its
docstrings below are the engine author's guide, clause by clause.

Every method receives ``now``: the instant the kit read from the store's clock
for this op, or ``None`` when the store was opened without a clock and the
driver keeps time itself (Postgres reads the server's clock in the statement,
contract T3). A driver compares and stamps instants with that one ``now`` only.

Job ids are what ``insert`` returned; the kit passes any id a caller gives
through unchanged, so a driver must treat an id of another kind (a ``str``
where it hands out ``int``, an int beyond its range) as "not found", never as
an error (``int_job_id`` does this for integer ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from alkstore_contract.kit.fast import new_job
from alkstore_contract.resolution import NewJobs
from alkstore_contract.types import Job, JobId, JobState
from alkstore_contract.validation import INT64_MAX, INT64_MIN, decode_payload

_ONE_US = timedelta(microseconds=1)


class StorageDriver(Protocol):
    """What an engine stores and how; every method is one atomic step against every other store on the location.

    ``queue`` is the queue's name as the caller wrote it: names are
    case-sensitive (S1), so ``"isolation"`` and ``"Isolation"`` are two queues
    (an engine mapping queues to case-insensitive table names breaks S4).
    """

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """Store one ready job per payload and return their ids in input order (E1–E8, E11).

        All or none: if storing fails part way, nothing of this call may stay.
        Each job: state ``ready``, 0 attempts, ``run_at``/``expires_at`` from
        ``jobs`` and ``now``, ``enqueued_at = now``, the four stamps verbatim.
        Ids are unique on the location, and a later ``insert`` on one queue
        gives higher ids (C2 breaks ties by id).
        """
        ...

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        """Take up to ``n`` (≥ 1) claimable jobs of ``queue``, the first ones in C2 order (C1–C5, X1, C7).

        Claimable at ``now``: ``ready`` with ``run_at <= now``, or
        ``processing`` with ``lease_expires_at <= now`` and ``attempts <
        max_attempts``; in both cases not expired (``expires_at`` is ``None``
        or later than ``now``). C2 order: priority descending, ``run_at``
        ascending, id ascending. Each taken job becomes ``processing`` with
        ``claimed_by = worker_id``, the claim ``token`` (fencing), ``attempts
        + 1`` and ``lease_expires_at = now + its visibility timeout``.
        Atomic: no job may be taken by two concurrent claims (C4), in this
        process or any other sharing the location. Returns the jobs as they
        are after the claim, in any order (the kit sorts them).
        """
        ...

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        """Delete the job if it is ``processing`` under ``token`` with ``lease_expires_at > now`` (H1, H2).

        The check and the delete are one atomic step, so a reclaim (a new
        token) can never slip between them (H5). ``True`` iff deleted.
        """
        ...

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        """Under the same fence as ``ack``: back to ``ready`` at ``now + delay_s`` (R1–R3).

        The lease, claimant and token are cleared, attempts are kept, and
        ``last_error`` replaces the stored one unless it is ``None`` (R3).
        ``True`` iff the fenced row changed.
        """
        ...

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        """Under the same fence as ``ack``: ``dead`` with ``last_error`` and ``died_at = now`` (R4, D1).

        The lease, claimant and token are cleared. ``True`` iff the fenced row changed.
        """
        ...

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        """Under the same fence as ``ack``: ``lease_expires_at = now + lease_s``, a reset, not an addition (H3)."""
        ...

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        """Delete each listed job of ``queue`` that is ``processing`` with ``lease_expires_at > now`` (B1).

        No token check (B1 acks by id); ``job_ids`` holds no duplicates and is
        never empty. One atomic step; returns how many were deleted.
        """
        ...

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        """Delete the job of ``queue`` with this id in any state; ``True`` iff one was deleted (B2)."""
        ...

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        """The job of ``queue`` with this id as stored now, or ``None`` (B3); a job of another queue is ``None``."""
        ...

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """The sweep of ``queue`` (X2, X3), in this order, as one atomic step against other sweeps and claims.

        1. Delete ``dead`` jobs whose ``died_at + dead_letter_retention_s <= now``
           (never when the retention is ``None``).
        2. ``ready``/``processing`` jobs with ``expires_at <= now`` become
           ``dead`` with ``last_error = expired_error``.
        3. ``processing`` jobs with ``lease_expires_at <= now`` and ``attempts
           >= max_attempts`` become ``dead`` with ``last_error = exhausted_error``.

        Steps 2 and 3 set ``died_at = now`` and clear lease, claimant and
        token. A job moved to dead by this sweep is not purged by it. Returns
        how many jobs steps 2 and 3 moved.
        """
        ...

    async def close(self) -> None:
        """Let running steps finish and release the storage. Called once, after the store refuses new ops."""
        ...


class AcksClaims(Protocol):
    """An optional driver capability: many handles' acks in one atomic step (``KitQueue.ack_handles``).

    A driver without it is served by one ``ack`` per handle, run concurrently.
    """

    async def ack_claims(self, queue: str, claims: Sequence[tuple[JobId, str]], now: datetime | None) -> list[JobId]:
        """Delete each listed job of ``queue`` whose claim (id and token) still holds it, as ``ack`` would (H1, H2).

        ``claims`` pairs each job id with its claim's token; it holds no
        duplicate id and is never empty. One atomic step; returns the ids
        deleted, in any order.
        """
        ...


class ReleasingDriver(StorageDriver, Protocol):
    """A driver of an engine declaring ``release`` (contract 2.1, L1–L4): one more fenced update.

    A protocol of its own, so a driver written for contract 2.0 still is a ``StorageDriver``; the kit's
    ``release`` refuses to run on a driver without it.
    """

    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        """Under the same fence as ``ack``: back to ``ready`` at ``now + delay_s`` with the claim's attempt given back.

        ``attempts - 1`` (the claim counted one; L2), lease, claimant and
        token cleared; ``last_error``, ``expires_at``, priority and stamps
        kept. ``True`` iff the fenced row changed.
        """
        ...


class HeartbeatsClaims(Protocol):
    """An optional driver capability: many handles' heartbeats in one atomic step (``KitQueue.heartbeat_handles``).

    A driver without it is served by one ``heartbeat`` per handle, run concurrently.
    """

    async def heartbeat_claims(
        self, queue: str, claims: Sequence[tuple[JobId, str, float]], now: datetime | None
    ) -> list[JobId]:
        """Renew each listed job's lease as ``heartbeat`` would (H3): ``lease_expires_at = now + lease_s``.

        ``claims`` holds (job id, its claim's token, ``lease_s``) with no
        duplicate id, never empty; each renewal under the fence of its own
        claim (H1). One atomic step; returns the ids renewed, in any order.
        """
        ...


class UniqueDriver(StorageDriver, Protocol):
    """A driver of an engine declaring ``unique_keys`` (contract 2.1, K1–K4): an insert that respects a key.

    A protocol of its own, so a driver written for contract 2.0 still is a ``StorageDriver``.
    """

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        """Store the one job of ``jobs`` holding ``unique_key``, unless an unfinished job of ``queue`` holds it.

        Unfinished: ``ready`` or ``processing`` (a dead job, and an acked or
        cancelled one, which is gone, hold no key). Returns the id of the job
        holding the key and ``True`` when this call stored it, or the existing
        job's id and ``False`` (nothing stored, nothing changed). One atomic
        step against every other store on the location (K3): a unique index
        over unfinished jobs, or a lock held from the check to the insert.
        """
        ...


class TransactionalDriver(StorageDriver, Protocol):
    """A driver of an engine declaring ``transactional_enqueue`` (contract 2.1, W1–W4)."""

    def transaction_problem(self, transaction: object) -> str | None:
        """Why ``transaction`` is not an open transaction this driver can insert through; ``None`` when it is.

        No I/O: the kit calls it with the other argument checks, before the clock read.
        """
        ...

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """``insert``, run inside the caller's ``transaction``: never a commit, a rollback or a savepoint release.

        The job exists if and only if the caller commits (W1–W4).
        """
        ...


class StoredState(Protocol):
    """The fields of a stored job that decide whether a claim may take it (a ``Job``, or an engine's own record)."""

    @property
    def state(self) -> JobState: ...
    @property
    def run_at(self) -> datetime: ...
    @property
    def expires_at(self) -> datetime | None: ...
    @property
    def lease_expires_at(self) -> datetime | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def max_attempts(self) -> int: ...


def claimable(job: StoredState, now: datetime) -> bool:
    """C1, X1, C7 for a driver deciding in Python: due and ready, or a lapsed lease with an attempt left; never expired.

    An SQL driver says the same in its claim statement's ``WHERE``.
    """
    if job.expires_at is not None and job.expires_at <= now:
        return False
    if job.state is JobState.READY:
        return job.run_at <= now
    lease = job.lease_expires_at
    return job.state is JobState.PROCESSING and lease is not None and lease <= now and job.attempts < job.max_attempts


def int_job_id(job_id: JobId) -> int | None:
    """The 64-bit integer a job id names, or ``None`` when no integer-keyed engine can have handed it out."""
    if isinstance(job_id, bool) or not isinstance(job_id, int):
        return None
    return job_id if INT64_MIN <= job_id <= INT64_MAX else None


def int_job_ids(job_ids: Sequence[JobId]) -> list[int]:
    """``int_job_id`` of each id, leaving out those that name none, sorted: the rows a batch ack (B1) deletes.

    Sorted, so two batches sharing ids lock their rows in one order. A batch
    of ids exactly as an integer-keyed engine hands them out (``int``, in
    range) is taken as it is, without a call an id; any other id in the batch,
    and ``int_job_id`` decides each.
    """
    row_ids = [job_id for job_id in job_ids if type(job_id) is int and INT64_MIN <= job_id <= INT64_MAX]
    if len(row_ids) < len(job_ids):
        row_ids = [row_id for row_id in map(int_job_id, job_ids) if row_id is not None]
    row_ids.sort()
    return row_ids


def duration_us(seconds: float) -> int:
    """``seconds`` as whole microseconds, rounded exactly as ``datetime + timedelta(seconds=…)`` rounds.

    0, every enqueue's delay without one, skips building the ``timedelta``.
    """
    if not seconds:
        return 0
    return timedelta(seconds=seconds) // _ONE_US


_STATES = {state.value: state for state in JobState}


def job_from_row(row: Sequence[Any]) -> Job:
    """A ``Job`` from a stored row in ``JOB_FIELDS`` order: payload as JSON text, state as its name.

    The other values go in as they are (instants as aware datetimes, the
    stamps as floats); the payload is decoded afresh, so each snapshot owns it.
    """
    return jobs_from_rows((row,))[0]


def jobs_from_rows(rows: Iterable[Sequence[Any]]) -> list[Job]:
    """``job_from_row`` of each row, in order: the snapshots of a batch claim's rows.

    A claim of a hundred builds a hundred snapshots, so this one loop unpacks
    each row by name (``*rest`` would build a list a row) and builds each with
    ``new_job`` (``alkstore_contract.kit.fast``).
    """
    jobs: list[Job] = []
    append = jobs.append
    build = new_job
    states = _STATES
    # fmt: off
    # One row's seventeen fields pass straight through, in JOB_FIELDS order: a line each would say nothing more.
    for (job_id, queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at,
         lease_expires_at, claimed_by, visibility_timeout_s, backoff_base_s, retention_s, last_error, died_at) in rows:
        append(build(job_id, queue, decode_payload(payload), states[state], priority, attempts, max_attempts, run_at,
                     expires_at, enqueued_at, lease_expires_at, claimed_by, visibility_timeout_s, backoff_base_s,
                     retention_s, last_error, died_at))
    # fmt: on
    return jobs


def c2_order_key(job: Job) -> tuple[int, datetime, JobId]:
    """contract C2's order as a sort key: priority descending, ready time ascending, id ascending.

    One engine's ids are all of one kind, so two ids compared here are both ints or both strs.
    """
    return (-job.priority, job.run_at, job.id)
