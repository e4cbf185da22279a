"""The SQLite engine's storage driver: the kit's ``StorageDriver`` as SQL statements on one ``SqliteDatabase``.

The kit (``alkstore_contract.kit``) does everything a store does but store:
it refuses ops on a closed store, validates and encodes, resolves options and
retry outcomes, reads the clock, mints claim tokens and keeps handles
one-shot. Each method here is what is left: ONE SQL statement, atomic by
itself (the sweep alone is three, in one transaction), costing one thread hop
— fewer cannot do, since the statement must run on the connection's thread
and its result come back. Single-job statements that other tasks submit while
a hop is pending share it (see coalesce.py), so under concurrency such an op
costs a fraction of a hop; a statement on many jobs takes a hop of its own
(``bulk``, see database.py). The docstring of each method says what it costs.

Atomicity against other stores and processes on the same file comes from
SQLite's write lock: a write statement holds it from its first read to its
commit, so what the statement read cannot change before it writes (C4, P1, P2).

Fencing (H1–H5): every handle statement's ``WHERE`` ends with ``FENCE``, the
whole validity predicate of H1: the row still carries this claim's token, is
``processing``, and its lease has not run out at the op's ``now``. A reclaim
writes a new token, so an old holder's statement matches nothing and the op
returns ``False``; the check and the change are one statement, with no window
for another worker or process between them.

Time: the kit reads the store's clock once per op and passes that ``now``
(SQLite stores are always opened with a clock, so it is never ``None`` here);
the driver stores it, and compares with it, as integer epoch microseconds.

The SQL lives in class attributes, so a subclass (the project's broken-engine
mutants) replaces one statement and keeps the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar, Self

from alkstore_contract.instants import to_epoch_us
from alkstore_contract.kit import NewJobs, duration_us, int_job_id, int_job_ids
from alkstore_contract.types import Job, JobId
from alkstore_sqlite.coalesce import Params
from alkstore_sqlite.columns import JOB_COLUMN_LIST, decode_job, optional_duration_us
from alkstore_sqlite.database import SqliteDatabase
from alkstore_sqlite.schema import DEFAULT_SYNCHRONOUS, Synchronous

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

FENCE = "id = :id AND token = :token AND state = 'processing' AND lease_expires_at > :now"
"""H1's validity predicate; every handle statement ends with it."""

_MOVE_TO_DEAD = """
UPDATE jobs
SET state = 'dead', last_error = :last_error, died_at = :now,
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE"""


class SqliteDriver:
    """The jobs of one SQLite file, changed one atomic statement at a time through one connection."""

    database_class: ClassVar[type[SqliteDatabase]] = SqliteDatabase
    """How the driver reaches the file (the project's broken-engine mutants put a subclass here)."""

    ENQUEUE_SQL: ClassVar[str] = f"{_INSERT_COLUMNS} VALUES (:queue, :payload, {_STAMP_VALUES})"
    # K1, K3: the insert stores nothing while an unfinished job of the queue holds the key; the partial
    # unique index jobs_unique_key decides, atomically against every connection and process.
    ENQUEUE_UNIQUE_SQL: ClassVar[str] = f"""
INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at,
                  visibility_timeout_s, visibility_timeout_us, backoff_base_s,
                  dead_letter_retention_s, dead_letter_retention_us, unique_key)
VALUES (:queue, :payload, {_STAMP_VALUES}, :unique_key)
ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND state <> 'dead' DO NOTHING
RETURNING id
"""
    KEY_HOLDER_SQL: ClassVar[str] = (
        "SELECT id FROM jobs WHERE queue = :queue AND unique_key = :unique_key AND state <> 'dead'"
    )
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
    ACK_SQL: ClassVar[str] = f"DELETE FROM jobs WHERE {FENCE}"
    RETRY_READY_SQL: ClassVar[str] = f"""
UPDATE jobs
SET state = 'ready', run_at = :run_at, last_error = COALESCE(:last_error, last_error),
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE {FENCE}
"""
    RELEASE_SQL: ClassVar[str] = f"""
UPDATE jobs
SET state = 'ready', run_at = :run_at, attempts = attempts - 1,
    lease_expires_at = NULL, claimed_by = NULL, token = NULL
WHERE {FENCE}
"""
    DEAD_LETTER_SQL: ClassVar[str] = f"{_MOVE_TO_DEAD} {FENCE}\n"
    HEARTBEAT_SQL: ClassVar[str] = f"UPDATE jobs SET lease_expires_at = :lease_expires_at WHERE {FENCE}"
    # The unary + keeps queue and lease off every index: found by the listed ids (primary key), the
    # ack costs what the list is long, not what the queue has in flight (a jobs_processing_lease scan).
    ACK_BATCH_SQL: ClassVar[str] = """
DELETE FROM jobs
WHERE id IN (SELECT value FROM json_each(:ids))
  AND +queue = :queue AND state = 'processing' AND +lease_expires_at > :now
"""
    CANCEL_SQL: ClassVar[str] = "DELETE FROM jobs WHERE id = :id AND queue = :queue"
    GET_JOB_SQL: ClassVar[str] = f"SELECT {JOB_COLUMN_LIST} FROM jobs WHERE id = :id AND queue = :queue"
    # The sweep, X2 in the order DEC-sweep-order gives: (a) purge, (b) expire, (c) dead-letter exhausted leases.
    SWEEP_PURGE_SQL: ClassVar[str] = """
DELETE FROM jobs
WHERE queue = :queue AND state = 'dead'
  AND dead_letter_retention_us IS NOT NULL AND died_at + dead_letter_retention_us <= :now
"""
    SWEEP_EXPIRE_SQL: ClassVar[str] = (
        f"{_MOVE_TO_DEAD} queue = :queue AND state IN ('ready', 'processing') AND expires_at <= :now\n"
    )
    SWEEP_EXHAUSTED_SQL: ClassVar[str] = (
        f"{_MOVE_TO_DEAD} queue = :queue AND state = 'processing' AND lease_expires_at <= :now "
        "AND attempts >= max_attempts\n"
    )

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, synchronous: Synchronous = DEFAULT_SYNCHRONOUS) -> Self:
        """Connect to the file at ``path`` (created and laid out if missing) with ``synchronous`` as validated."""
        return cls(await cls.database_class.connect(path, synchronous=synchronous))

    @property
    def db(self) -> SqliteDatabase:
        """The connection every statement goes through."""
        return self._db

    @property
    def location(self) -> str:
        """The file this driver is open on."""
        return self._db.location

    def _now(self, now: datetime | None) -> datetime:
        """The op's instant: the kit's one read of the store's clock (T1, T2)."""
        assert now is not None, "a SQLite store is always opened with a clock"
        return now

    def _epoch_us(self, instant: datetime) -> int:
        """An instant as the file keeps it: integer microseconds since the epoch, exact both ways."""
        return to_epoch_us(instant)

    # --- insert and claim -------------------------------------------------------------------------

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """E1–E8, E11: one job, one INSERT, one hop (shared); a batch, one INSERT … SELECT, a hop of its own.

        Every job of one call shares every stamp but its payload, so the stamps
        bind once; a batch's payloads travel as one JSON array of their JSON texts.
        """
        params = self._insert_params(queue, jobs, now)
        payloads = jobs.payloads
        if len(payloads) == 1:
            params["payload"] = payloads[0]
            written = await self._db.write(self.ENQUEUE_SQL, params)
            assert written.lastrowid is not None, "an INSERT that returned always has a rowid"
            return [written.lastrowid]
        params["payloads"] = json.dumps(list(payloads))
        rows = await self._db.fetch(self.ENQUEUE_MANY_SQL, params, bulk=True)
        return sorted([row[0] for row in rows])  # RETURNING id, in no promised order

    def _insert_params(self, queue: str, jobs: NewJobs, now: datetime | None) -> dict[str, object]:
        """The named parameters every job of one insert shares: all but its payload (and key)."""
        at = self._now(now)
        expires_at = jobs.expires_at_from(at)
        params: dict[str, object] = {
            "queue": queue,
            "priority": jobs.priority,
            "max_attempts": jobs.max_attempts,
            "run_at": self._epoch_us(jobs.run_at_from(at)),
            "expires_at": None if expires_at is None else self._epoch_us(expires_at),
            "enqueued_at": self._epoch_us(at),
            "visibility_timeout_s": jobs.visibility_timeout_s,
            "visibility_timeout_us": duration_us(jobs.visibility_timeout_s),
            "backoff_base_s": jobs.backoff_base_s,
            "dead_letter_retention_s": jobs.dead_letter_retention_s,
            "dead_letter_retention_us": optional_duration_us(jobs.dead_letter_retention_s),
        }
        return params

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        """K1–K3: one INSERT … ON CONFLICT DO NOTHING; on a conflict, the holder's id.

        The holder can finish between the two statements (another connection
        acks it): then nothing holds the key any more, and the insert is tried
        again.
        """
        params = self._insert_params(queue, jobs, now)
        params["payload"] = jobs.payloads[0]
        params["unique_key"] = unique_key
        while True:
            stored = await self._db.fetch(self.ENQUEUE_UNIQUE_SQL, params)
            if stored:
                return stored[0][0], True
            holder = await self._db.fetch(self.KEY_HOLDER_SQL, {"queue": queue, "unique_key": unique_key})
            if holder:
                return holder[0][0], False

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        """C1–C5, X1, C7: one UPDATE … RETURNING, one hop (shared for one job, its own for more)."""
        rows = await self._db.fetch(self.CLAIM_SQL, self._claim_params(queue, worker_id, n, token, now), bulk=n > 1)
        return [decode_job(row) for row in rows]

    def _claim_params(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> dict[str, object]:
        """``CLAIM_SQL``'s named parameters, apart so a variant of the statement can add its own."""
        return {
            "queue": queue,
            "now": self._epoch_us(self._now(now)),
            "worker_id": worker_id,
            "token": token,
            "n": n,
        }

    # --- the fenced handle ops --------------------------------------------------------------------

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        """H2: delete the job. One statement, one hop (shared)."""
        return await self._fenced(self.ACK_SQL, {}, job_id, token, self._now(now))

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        """R1–R3: ready again at ``now + delay_s``. One statement, one hop (shared)."""
        at = self._now(now)
        params = {"run_at": self._epoch_us(at + timedelta(seconds=delay_s)), "last_error": last_error}
        return await self._fenced(self.RETRY_READY_SQL, params, job_id, token, at)

    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        """L1–L3: ready again at ``now + delay_s`` with the claim's attempt given back. One statement, one hop."""
        at = self._now(now)
        params = {"run_at": self._epoch_us(at + timedelta(seconds=delay_s))}
        return await self._fenced(self.RELEASE_SQL, params, job_id, token, at)

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        """R4, D1: dead with ``last_error``. One statement, one hop (shared)."""
        return await self._fenced(self.DEAD_LETTER_SQL, {"last_error": last_error}, job_id, token, self._now(now))

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        """H3: lease = now + ``lease_s``, a reset. One statement, one hop (shared)."""
        at = self._now(now)
        params = {"lease_expires_at": self._epoch_us(at + timedelta(seconds=lease_s))}
        return await self._fenced(self.HEARTBEAT_SQL, params, job_id, token, at)

    async def _fenced(self, sql: str, params: Params, job_id: JobId, token: str, now: datetime) -> bool:
        """Run ``sql`` fenced to the claim ``token`` of ``job_id``; ``True`` iff it changed the row.

        The id is the one the claim returned (the kit passes a handle's own), so it is this engine's kind.
        """
        fenced = {**params, "id": job_id, "token": token, "now": self._epoch_us(now)}
        written = await self._db.write(sql, fenced)
        return written.rowcount == 1

    # --- batch ack, cancel, get, sweep --------------------------------------------------------------

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        """B1: one DELETE over a JSON array of ids, one hop (shared for one id, its own for more)."""
        row_ids = int_job_ids(job_ids)
        if not row_ids:
            return 0
        params = {"queue": queue, "now": self._epoch_us(self._now(now)), "ids": json.dumps(row_ids)}
        written = await self._db.write(self.ACK_BATCH_SQL, params, bulk=len(row_ids) > 1)
        return written.rowcount

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        """B2: one DELETE by primary key, one hop (shared); an id of another kind is not found."""
        row_id = int_job_id(job_id)
        if row_id is None:
            return False
        written = await self._db.write(self.CANCEL_SQL, {"id": row_id, "queue": queue})
        return written.rowcount == 1

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        """B3: one SELECT by primary key, one hop (shared); an id of another kind is not found."""
        row_id = int_job_id(job_id)
        if row_id is None:
            return None
        rows = await self._db.fetch(self.GET_JOB_SQL, {"id": row_id, "queue": queue})
        return decode_job(rows[0]) if rows else None

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """X2, X3: purge, expire, dead-letter; how many moved to dead.

        Three statements in one ``BEGIN IMMEDIATE`` transaction: five hops, and
        the connection is this sweep's alone meanwhile. The write lock makes
        concurrent sweeps (any store, any process) run one after the other, so
        each job moves once and their counts add up.
        """
        now_us = self._epoch_us(self._now(now))
        async with self._db.transaction() as tx:
            await tx.execute(self.SWEEP_PURGE_SQL, {"queue": queue, "now": now_us})
            expired = await tx.execute(
                self.SWEEP_EXPIRE_SQL, {"queue": queue, "now": now_us, "last_error": expired_error}
            )
            exhausted = await tx.execute(
                self.SWEEP_EXHAUSTED_SQL, {"queue": queue, "now": now_us, "last_error": exhausted_error}
            )
        return expired + exhausted

    async def close(self) -> None:
        """Let the statements already submitted finish, then close the connection (S3)."""
        await self._db.close()
