"""A queue: a name inside a store, with the ``QueueOpts`` it stamps on what it enqueues.

Every op validates its input with the contract's helpers before any I/O (so bad
input stores nothing), reads the clock at most once, and — except the sweep —
is ONE SQL statement, atomic by itself, costing one thread hop: fewer cannot
do, since the statement must run on the connection's thread and its result
come back. Single-job statements that other tasks submit while a hop is
pending share it (see coalesce.py), so under concurrency such an op costs a
fraction of a hop; a statement on many jobs takes a hop of its own (``bulk``,
see database.py). The comment on each op says what it costs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from alkstore_contract.errors import InvalidArgument
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
from alkstore_contract.types import Job, QueueOpts
from alkstore_contract.validation import (
    INT64_MAX,
    Duration,
    JobId,
    encode_payload,
    validate_batch_size,
    validate_job_id,
    validate_job_ids,
    validate_worker_id,
)
from alkstore_sqlite.database import SqliteDatabase
from alkstore_sqlite.handle import SqliteJobHandle
from alkstore_sqlite.rows import (
    JOB_COLUMN_LIST,
    as_row_id,
    claim_order_key,
    decode_job,
    duration_us,
    optional_duration_us,
)

_INSERT_COLUMNS = """
INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at,
                  visibility_timeout_s, visibility_timeout_us, backoff_base_s,
                  dead_letter_retention_s, dead_letter_retention_us)
"""
_STAMP_VALUES = """'ready', :priority, 0, :max_attempts, :run_at, :expires_at, :enqueued_at,
        :visibility_timeout_s, :visibility_timeout_us, :backoff_base_s,
        :dead_letter_retention_s, :dead_letter_retention_us"""

NOT_EXPIRED = "(expires_at IS NULL OR expires_at > :now)"
"""X1: an expired job is never handed out, whatever its state."""


def _stamp_params(queue: str, job: NewJob) -> dict[str, object]:
    """Every column of a new row except its payload."""
    return {
        "queue": queue,
        "priority": job.priority,
        "max_attempts": job.max_attempts,
        "run_at": to_epoch_us(job.run_at),
        "expires_at": None if job.expires_at is None else to_epoch_us(job.expires_at),
        "enqueued_at": to_epoch_us(job.enqueued_at),
        "visibility_timeout_s": job.visibility_timeout_s,
        "visibility_timeout_us": duration_us(job.visibility_timeout_s),
        "backoff_base_s": job.backoff_base_s,
        "dead_letter_retention_s": job.dead_letter_retention_s,
        "dead_letter_retention_us": optional_duration_us(job.dead_letter_retention_s),
    }


class SqliteQueue:
    """The ops of one queue of a ``SqliteStore``."""

    handle_class: ClassVar[type[SqliteJobHandle]] = SqliteJobHandle

    ENQUEUE_SQL: ClassVar[str] = f"{_INSERT_COLUMNS} VALUES (:queue, :payload, {_STAMP_VALUES})"
    # One INSERT … SELECT for the whole batch: atomic by itself, so all rows or none. Rows are
    # inserted in the order of ``key`` (the array index), and AUTOINCREMENT hands out ids in
    # insertion order, so the ascending ids match the input order.
    ENQUEUE_MANY_SQL: ClassVar[str] = f"""
{_INSERT_COLUMNS}
SELECT :queue, value, {_STAMP_VALUES}
FROM json_each(:payloads)
ORDER BY key
RETURNING id
"""
    # C1–C3 in one statement. C1's two kinds of claimable job each get an index-served
    # subquery already in C2 order (ready jobs: jobs_claim; lapsed leases: jobs_lease), each
    # cut to n; the best n of both are taken. A write statement holds the file's write lock
    # from its first read to its commit, so no other connection or process can take the same
    # row in between (C4).
    CLAIM_SQL: ClassVar[str] = f"""
WITH ready AS (
    SELECT id, priority, run_at FROM jobs
    WHERE queue = :queue AND state = 'ready' AND run_at <= :now AND {NOT_EXPIRED}
    ORDER BY priority DESC, run_at, id
    LIMIT :n
), lapsed AS (
    SELECT id, priority, run_at FROM jobs
    WHERE queue = :queue AND state = 'processing' AND lease_expires_at <= :now
      AND attempts < max_attempts AND {NOT_EXPIRED}
    ORDER BY priority DESC, run_at, id
    LIMIT :n
)
UPDATE jobs
SET state = 'processing',
    attempts = attempts + 1,
    claimed_by = :worker_id,
    token = :token,
    lease_expires_at = :now + visibility_timeout_us
WHERE id IN (
    SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed)
    ORDER BY priority DESC, run_at, id
    LIMIT :n
)
RETURNING {JOB_COLUMN_LIST}
"""
    # The unary + keeps queue and lease off every index: found by the listed ids (primary key), the
    # ack costs what the list is long, not what the queue has in flight (a jobs_processing_lease scan).
    ACK_BATCH_SQL: ClassVar[str] = """
DELETE FROM jobs
WHERE id IN (SELECT value FROM json_each(:ids))
  AND +queue = :queue AND state = 'processing' AND +lease_expires_at > :now
"""
    CANCEL_SQL: ClassVar[str] = "DELETE FROM jobs WHERE id = :id AND queue = :queue"
    GET_JOB_SQL: ClassVar[str] = f"SELECT {JOB_COLUMN_LIST} FROM jobs WHERE id = :id AND queue = :queue"
    # The sweep, X2 in decision 8's order: (a) purge, (b) expire, (c) dead-letter exhausted leases.
    SWEEP_PURGE_SQL: ClassVar[str] = """
DELETE FROM jobs
WHERE queue = :queue AND state = 'dead'
  AND dead_letter_retention_us IS NOT NULL AND died_at + dead_letter_retention_us <= :now
"""
    SWEEP_EXPIRE_SQL: ClassVar[str] = """
UPDATE jobs
SET state = 'dead', last_error = :last_error, died_at = :now,
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE queue = :queue AND state IN ('ready', 'processing') AND expires_at <= :now
"""
    SWEEP_EXHAUSTED_SQL: ClassVar[str] = """
UPDATE jobs
SET state = 'dead', last_error = :last_error, died_at = :now,
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE queue = :queue AND state = 'processing' AND lease_expires_at <= :now AND attempts >= max_attempts
"""

    def __init__(self, db: SqliteDatabase, name: str, opts: QueueOpts) -> None:
        self._db = db
        self._name = name
        self._opts = opts

    @property
    def name(self) -> str:
        return self._name

    @property
    def opts(self) -> QueueOpts:
        return self._opts

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
        """E1–E10: store one job, ready now, later or at ``run_at``. One INSERT, one hop."""
        self._db.check_open("enqueue")
        payload_json = encode_payload(payload)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        job = resolve_new_job(payload_json, options, self._opts, self._db.now())
        params = {**_stamp_params(self._name, job), "payload": job.payload_json}
        written = await self._db.write("enqueue", self.ENQUEUE_SQL, params)
        assert written.lastrowid is not None  # an INSERT that returned always has a rowid
        return written.lastrowid

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
        """E11: store every job or none, from one clock read; ids in input order. One statement, one hop.

        Every job of one call shares the options and the ``now``, so all stamps
        but the payload are equal and bind once; the payloads travel as one JSON
        array of their JSON texts. An empty list does no I/O.
        """
        self._db.check_open("enqueue_many")
        if not isinstance(payloads, list | tuple):
            raise InvalidArgument(f"payloads={type(payloads).__name__}: must be a list or tuple of payloads")
        payload_jsons = encode_payloads(payloads)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        if not payload_jsons:
            return []
        now = self._db.now()
        # Resolution depends on the options, the queue's opts and now — never on the payload —
        # so the first job's resolved stamps are every job's.
        stamps = resolve_new_job(payload_jsons[0], options, self._opts, now)
        params = {**_stamp_params(self._name, stamps), "payloads": json.dumps(payload_jsons)}
        rows = await self._db.fetch("enqueue_many", self.ENQUEUE_MANY_SQL, params, bulk=len(payload_jsons) > 1)
        return sorted(row[0] for row in rows)  # RETURNING id

    async def claim_one(self, worker_id: str) -> SqliteJobHandle | None:
        """C1–C4, C6: the first claimable job under a fresh lease, or ``None``. One statement, one hop."""
        handles = await self._claim("claim_one", worker_id, 1)
        return handles[0] if handles else None

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """C5: up to ``n`` jobs in C2 order; ``n <= 0`` touches nothing. One statement, one hop."""
        # list() re-types the list as the protocol's list[JobHandle] (lists are invariant).
        return list(await self._claim("claim_batch", worker_id, n))

    async def _claim(self, op: str, worker_id: object, n: object) -> list[SqliteJobHandle]:
        self._db.check_open(op)
        worker = validate_worker_id(worker_id)
        count = validate_batch_size(n)
        if count <= 0:
            return []
        # One fresh token per claim call, from the OS's randomness rather than the store's seeded
        # rng: two stores opened with one seed must still never mint the same token. Fencing is
        # on id AND token, so jobs of one batch may share it.
        token = secrets.token_hex(16)
        params = {
            "queue": self._name,
            "now": to_epoch_us(self._db.now()),
            "worker_id": worker,
            "token": token,
            "n": min(count, INT64_MAX),
        }
        rows = await self._db.fetch(op, self.CLAIM_SQL, params, bulk=count > 1)
        rows.sort(key=claim_order_key)  # RETURNING hands rows back in no promised order
        return [self.handle_class(self._db, decode_job(row), token) for row in rows]

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """B1: delete the listed jobs of this queue whose lease is live; how many. One statement, one hop."""
        self._db.check_open("ack_batch")
        row_ids = sorted({row_id for job_id in validate_job_ids(ids) if (row_id := as_row_id(job_id)) is not None})
        if not row_ids:
            return 0
        params = {"queue": self._name, "now": to_epoch_us(self._db.now()), "ids": json.dumps(row_ids)}
        written = await self._db.write("ack_batch", self.ACK_BATCH_SQL, params, bulk=len(row_ids) > 1)
        return written.rowcount

    async def cancel(self, job_id: JobId) -> bool:
        """B2: delete the job of this queue in any state; ``True`` iff deleted. One statement, one hop."""
        self._db.check_open("cancel")
        row_id = as_row_id(validate_job_id(job_id))
        if row_id is None:
            return False
        written = await self._db.write("cancel", self.CANCEL_SQL, {"id": row_id, "queue": self._name})
        return written.rowcount == 1

    async def get_job(self, job_id: JobId) -> Job | None:
        """B3: a fresh snapshot of the job of this queue, or ``None``. One statement, one hop."""
        self._db.check_open("get_job")
        row_id = as_row_id(validate_job_id(job_id))
        if row_id is None:
            return None
        rows = await self._db.fetch("get_job", self.GET_JOB_SQL, {"id": row_id, "queue": self._name})
        return decode_job(rows[0]) if rows else None

    async def sweep_expired(self) -> int:
        """X2, X3: purge, expire, dead-letter; how many moved to dead.

        Three statements in one ``BEGIN IMMEDIATE`` transaction: five hops, and
        the connection is this sweep's alone meanwhile. The write lock makes
        concurrent sweeps (any store, any process) run one after the other, so
        each job moves once and their counts add up.
        """
        self._db.check_open("sweep_expired")
        now = to_epoch_us(self._db.now())
        async with self._db.transaction("sweep_expired") as tx:
            await tx.execute(self.SWEEP_PURGE_SQL, {"queue": self._name, "now": now})
            expired = await tx.execute(
                self.SWEEP_EXPIRE_SQL, {"queue": self._name, "now": now, "last_error": LAST_ERROR_EXPIRED}
            )
            exhausted = await tx.execute(
                self.SWEEP_EXHAUSTED_SQL, {"queue": self._name, "now": now, "last_error": LAST_ERROR_MAX_ATTEMPTS}
            )
        return expired + exhausted
