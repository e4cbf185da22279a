"""A claim's handle: every op is one statement fenced to this very claim (SPEC H1).

The fence is ``id AND token AND state = 'processing' AND lease_expires_at >
now`` in the ``WHERE`` of the one statement that acts, so the check and the
write cannot be split by a reclaim: an old worker whose lease lapsed and whose
job was claimed again (with a new token) changes nothing and gets ``False``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from alkstore_contract.handles import OneShot, raise_if_closed
from alkstore_contract.resolution import fail_error
from alkstore_contract.types import Job
from alkstore_contract.validation import Duration, optional_duration_seconds, validate_error
from alkstore_postgres.timing import retry_params, seconds_micros

if TYPE_CHECKING:
    from alkstore_postgres.queue import PgQueue

_CLOCK_CTE = "WITH clock AS (SELECT COALESCE($1::timestamptz, statement_timestamp()) AS now)"
_FENCE = "id = $2 AND token = $3 AND state = 'processing' AND lease_expires_at > (SELECT now FROM clock)"
_RELEASE = "lease_expires_at = NULL, claimed_by = NULL, token = NULL"


class PgJobHandle:
    """One claim of one job, as ``claim_one``/``claim_batch`` return it."""

    ACK_SQL: ClassVar[str] = f"{_CLOCK_CTE} DELETE FROM {{jobs}} WHERE {_FENCE} RETURNING id"
    """H2: the job is gone."""

    RETRY_READY_SQL: ClassVar[str] = f"""{_CLOCK_CTE}
UPDATE {{jobs}}
SET state = 'ready', run_at = (SELECT now FROM clock) + $4::bigint * interval '1 microsecond',
    last_error = COALESCE($5, last_error), {_RELEASE}
WHERE {_FENCE}
RETURNING id
"""
    """R1–R3: back to ready after the delay the contract resolved; an error given replaces the old one."""

    DEAD_SQL: ClassVar[str] = f"""{_CLOCK_CTE}
UPDATE {{jobs}}
SET state = 'dead', last_error = $4, died_at = (SELECT now FROM clock), {_RELEASE}
WHERE {_FENCE}
RETURNING id
"""
    """R4 and D1: dead now, with the resolved ``last_error``."""

    HEARTBEAT_SQL: ClassVar[str] = f"""{_CLOCK_CTE}
UPDATE {{jobs}}
SET lease_expires_at = (SELECT now FROM clock)
    + COALESCE($4::bigint * interval '1 microsecond', {{schema}}.seconds_interval(visibility_timeout_s))
WHERE {_FENCE}
RETURNING id
"""
    """H3: an absolute reset from now, by ``extend`` or the stamped visibility timeout."""

    def __init__(self, queue: PgQueue, job: Job, token: str) -> None:
        self._queue = queue
        self._job = job
        self._token = token
        self._one_shot = OneShot(job.id)

    @property
    def job(self) -> Job:
        """The job as this claim left it."""
        return self._job

    def _closed_check(self, op: str) -> None:
        raise_if_closed(self._queue.store.closed, f"{op} on job {self._job.id!r}")

    async def _fenced(self, op: str, template: str, *args: object) -> bool:
        store = self._queue.store
        rows = await store.fetch(op, template, store.now_param(), self._job.id, self._token, *args)
        store.upkeep.note(len(rows))
        return bool(rows)

    async def ack(self) -> bool:
        """Delete the job if this claim still holds it (H1, H2); one-shot (H4)."""
        self._closed_check("ack()")
        self._one_shot.spend("ack")
        return await self._fenced("ack()", self.ACK_SQL)

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """Back to ready after ``delay`` or a backoff draw, or dead when attempts are spent (R1–R4)."""
        self._closed_check("retry()")
        self._one_shot.check("retry")
        error = validate_error(error)
        delay_s = optional_duration_seconds("delay", delay)
        self._one_shot.spend("retry")
        outcome = retry_params(
            attempts=self._job.attempts,
            max_attempts=self._job.max_attempts,
            backoff_base_s=self._job.backoff_base_s,
            error=error,
            delay_s=delay_s,
            rng=self._queue.store.rng,
        )
        if outcome.dead:
            return await self._fenced("retry()", self.DEAD_SQL, outcome.last_error)
        return await self._fenced("retry()", self.RETRY_READY_SQL, outcome.delay_us, outcome.last_error)

    async def fail(self, error: str | None = None) -> bool:
        """Dead at once, ``last_error`` = error or ``"failed"`` (D1); one-shot."""
        self._closed_check("fail()")
        self._one_shot.check("fail")
        error = validate_error(error)
        self._one_shot.spend("fail")
        return await self._fenced("fail()", self.DEAD_SQL, fail_error(error))

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """Reset the lease to now + ``extend`` (or the stamped visibility timeout); repeatable (H3)."""
        self._closed_check("heartbeat()")
        self._one_shot.check("heartbeat")
        extend_s = optional_duration_seconds("extend", extend, positive=True)
        extend_us = None if extend_s is None else seconds_micros(extend_s)
        return await self._fenced("heartbeat()", self.HEARTBEAT_SQL, extend_us)
