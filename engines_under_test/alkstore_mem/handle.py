"""A claim of one job, and the fenced ops on it (SPEC H1–H5, R1–R4, D1).

Every op follows the order of decision 4: ``raise_if_closed`` → ``OneShot.check``
→ argument validation → ``OneShot.spend`` (ack/retry/fail) → one clock read →
the fenced change. The change runs with no ``await`` between reading the job
and writing it, so it is atomic on the event loop: no claim, sweep or other
handle op can slip in between the fencing check and the write.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from alkstore_contract.handles import OneShot, raise_if_closed
from alkstore_contract.resolution import RetryOutcome, fail_error, resolve_retry
from alkstore_contract.types import Job, JobState
from alkstore_contract.validation import Duration, optional_duration_seconds, validate_error
from alkstore_mem.record import JobRecord, as_timedelta, snapshot

if TYPE_CHECKING:
    from alkstore_mem.queue import MemQueue


class MemJobHandle:
    """One claim: the job as claimed, and the token that fences every op to this claim.

    Override points for subclasses: ``_holds_lease`` (the H1 predicate) and
    ``_apply_ack``/``_apply_retry``/``_apply_fail``/``_apply_heartbeat`` (what a
    valid op does to the stored job).
    """

    __slots__ = ("_job", "_job_id", "_once", "_queue", "_token")

    def __init__(self, queue: MemQueue, record: JobRecord, token: int) -> None:
        self._queue = queue
        self._job_id = record.id
        self._job = snapshot(record)
        self._token = token
        self._once = OneShot(record.id)

    @property
    def job(self) -> Job:
        """The job as it was right after the claim (a snapshot; the store may have moved on)."""
        return self._job

    async def ack(self) -> bool:
        """Delete the job if this claim still holds it (H2)."""
        raise_if_closed(self._queue.store.closed, "ack")
        self._once.spend("ack")
        record = self._held(self._queue.store.clock.now())
        if record is None:
            return False
        self._apply_ack(record)
        return True

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """Back to ready after ``delay`` (or the backoff curve), or dead when attempts are spent (R1–R4).

        The outcome is resolved before the fencing check, as the SQL engines must
        (it is a parameter of their one UPDATE): the same seed then draws the
        same jitter sequence on every engine.
        """
        store = self._queue.store
        raise_if_closed(store.closed, "retry")
        self._once.check("retry")
        checked_error = validate_error(error)
        delay_s = optional_duration_seconds("delay", delay)
        self._once.spend("retry")
        now = store.clock.now()
        outcome = resolve_retry(
            attempts=self._job.attempts,
            max_attempts=self._job.max_attempts,
            backoff_base_s=self._job.backoff_base_s,
            error=checked_error,
            delay_s=delay_s,
            now=now,
            rng=store.rng,
        )
        record = self._held(now)
        if record is None:
            return False
        self._apply_retry(record, outcome, now)
        return True

    async def fail(self, error: str | None = None) -> bool:
        """Dead at once, ``last_error`` = error or ``"failed"`` (D1)."""
        store = self._queue.store
        raise_if_closed(store.closed, "fail")
        self._once.check("fail")
        checked_error = validate_error(error)
        self._once.spend("fail")
        now = store.clock.now()
        record = self._held(now)
        if record is None:
            return False
        self._apply_fail(record, fail_error(checked_error), now)
        return True

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """Reset the lease to now + ``extend`` (or the stamped visibility timeout); repeatable (H3)."""
        store = self._queue.store
        raise_if_closed(store.closed, "heartbeat")
        self._once.check("heartbeat")
        extend_s = optional_duration_seconds("extend", extend, positive=True)
        now = store.clock.now()
        record = self._held(now)
        if record is None:
            return False
        self._apply_heartbeat(record, extend_s if extend_s is not None else record.visibility_timeout_s, now)
        return True

    def _held(self, now: datetime) -> JobRecord | None:
        """The stored job if this claim still holds it at ``now``, else ``None``."""
        record = self._queue.index.jobs.get(self._job_id)
        return record if record is not None and self._holds_lease(record, now) else None

    def _holds_lease(self, record: JobRecord, now: datetime) -> bool:
        """SPEC H1: processing, under this very claim's token, and the lease not yet over."""
        lease = record.lease_expires_at
        return record.token == self._token and record.state is JobState.PROCESSING and lease is not None and now < lease

    def _apply_ack(self, record: JobRecord) -> None:
        del self._queue.index.jobs[record.id]

    def _apply_retry(self, record: JobRecord, outcome: RetryOutcome, now: datetime) -> None:
        if outcome.dead:
            assert outcome.last_error is not None, "a dead-letter outcome always names its error"
            record.kill(outcome.last_error, now)
            self._queue.index.watch_death(record)
            return
        assert outcome.run_at is not None, "a retry outcome always has a ready time"
        record.state = JobState.READY
        record.run_at = outcome.run_at
        if outcome.last_error is not None:
            record.last_error = outcome.last_error
        record.release()
        self._queue.index.file_delayed(record)

    def _apply_fail(self, record: JobRecord, last_error: str, now: datetime) -> None:
        record.kill(last_error, now)
        self._queue.index.watch_death(record)

    def _apply_heartbeat(self, record: JobRecord, seconds: float, now: datetime) -> None:
        """H3: an absolute reset from now, never an addition to the old deadline."""
        lease = now + as_timedelta(seconds)
        record.lease_expires_at = lease
        record.version += 1
        self._queue.index.file_lease(record, lease)
        if record.attempts >= record.max_attempts:
            self._queue.index.watch(lease, record.id)
