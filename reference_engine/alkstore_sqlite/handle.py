"""One claim of one job, fenced to that claim (contract H1–H5, R1–R4, D1).

Every op is ONE statement whose ``WHERE`` is the whole validity predicate of H1:
the row still carries this claim's token, is ``processing``, and its lease has
not run out at the op's ``now``. A reclaim writes a new token, so an old holder's
statement matches nothing and the op returns ``False`` — the check and the change
are one atomic statement, with no window for another worker or process between
them. Each op costs one thread hop at most, shared with the statements other
tasks submit meanwhile (see coalesce.py); the statement, and so its own
``True``/``False``, is the same either way.
"""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar

from alkstore_contract.handles import OneShot
from alkstore_contract.instants import to_epoch_us
from alkstore_contract.resolution import fail_error, resolve_retry
from alkstore_contract.types import Job
from alkstore_contract.validation import Duration, optional_duration_seconds, validate_error
from alkstore_sqlite.database import Params, SqliteDatabase

FENCE = "id = :id AND token = :token AND state = 'processing' AND lease_expires_at > :now"
"""H1's validity predicate; every handle statement ends with it."""

_DEAD_LETTER_SQL = f"""
UPDATE jobs
SET state = 'dead', last_error = :last_error, died_at = :now,
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE {FENCE}
"""


class SqliteJobHandle:
    """A claimed job: ``ack``/``retry``/``fail`` once, ``heartbeat`` as often as needed."""

    ACK_SQL: ClassVar[str] = f"DELETE FROM jobs WHERE {FENCE}"
    RETRY_READY_SQL: ClassVar[str] = f"""
UPDATE jobs
SET state = 'ready', run_at = :run_at, last_error = COALESCE(:last_error, last_error),
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE {FENCE}
"""
    RETRY_DEAD_SQL: ClassVar[str] = _DEAD_LETTER_SQL
    FAIL_SQL: ClassVar[str] = _DEAD_LETTER_SQL
    HEARTBEAT_SQL: ClassVar[str] = f"UPDATE jobs SET lease_expires_at = :lease_expires_at WHERE {FENCE}"

    def __init__(self, db: SqliteDatabase, job: Job, token: str) -> None:
        self._db = db
        self._job = job
        self._token = token
        self._one_shot = OneShot(job.id)

    @property
    def job(self) -> Job:
        """The job as this claim left it (state ``processing``, attempts counted, lease set)."""
        return self._job

    async def ack(self) -> bool:
        """H2: delete the job. One statement, one hop."""
        self._db.check_open("ack")
        self._one_shot.spend("ack")
        return await self._fenced("ack", self.ACK_SQL, {}, to_epoch_us(self._db.now()))

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """R1–R4: back to ready after ``delay`` (or the backoff curve), or dead when attempts are spent.

        The outcome is resolved in Python from the claim's snapshot — its
        attempts and stamps cannot change while this claim holds the row, and
        if the claim no longer holds it the fenced statement changes nothing.
        One statement, one hop.
        """
        self._db.check_open("retry")
        self._one_shot.check("retry")
        error = validate_error(error)
        delay_s = optional_duration_seconds("delay", delay)
        self._one_shot.spend("retry")
        now = self._db.now()
        outcome = resolve_retry(
            attempts=self._job.attempts,
            max_attempts=self._job.max_attempts,
            backoff_base_s=self._job.backoff_base_s,
            error=error,
            delay_s=delay_s,
            now=now,
            rng=self._db.rng,
        )
        if outcome.dead:
            return await self._fenced(
                "retry", self.RETRY_DEAD_SQL, {"last_error": outcome.last_error}, to_epoch_us(now)
            )
        assert outcome.run_at is not None  # resolve_retry sets run_at whenever the job lives on
        params = {"run_at": to_epoch_us(outcome.run_at), "last_error": outcome.last_error}
        return await self._fenced("retry", self.RETRY_READY_SQL, params, to_epoch_us(now))

    async def fail(self, error: str | None = None) -> bool:
        """D1: dead at once, ``last_error`` = error or ``"failed"``. One statement, one hop."""
        self._db.check_open("fail")
        self._one_shot.check("fail")
        last_error = fail_error(validate_error(error))
        self._one_shot.spend("fail")
        return await self._fenced("fail", self.FAIL_SQL, {"last_error": last_error}, to_epoch_us(self._db.now()))

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """H3: lease = now + (extend, or the stamped visibility timeout); repeatable. One statement, one hop."""
        self._db.check_open("heartbeat")
        self._one_shot.check("heartbeat")
        extend_s = optional_duration_seconds("extend", extend, positive=True)
        seconds = self._job.visibility_timeout_s if extend_s is None else extend_s
        now = self._db.now()
        lease_expires_at = to_epoch_us(now + timedelta(seconds=seconds))
        return await self._fenced(
            "heartbeat", self.HEARTBEAT_SQL, {"lease_expires_at": lease_expires_at}, to_epoch_us(now)
        )

    async def _fenced(self, op: str, sql: str, params: Params, now_us: int) -> bool:
        """Run ``sql`` fenced to this claim; ``True`` iff it changed the row."""
        fenced = {**params, "id": self._job.id, "token": self._token, "now": now_us}
        written = await self._db.write(op, sql, fenced)
        return written.rowcount == 1
