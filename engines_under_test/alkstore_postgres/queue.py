"""A queue: a name inside a store, the options it stamps, and one SQL statement per operation.

Every statement that needs the time starts with the ``clock`` CTE, which reads
``COALESCE($1::timestamptz, statement_timestamp())`` once: the injected
clock's instant when there is one, else the database server's (SPEC T3).
Durations computed in Python arrive as exact microseconds (``$n::bigint *
interval '1 microsecond'``); stamped float seconds go through the schema's
``seconds_interval``, which rounds as Python's ``timedelta`` does.

Templates name the table ``{jobs}``, the schema ``{schema}`` and the snapshot
columns ``{columns}`` / ``{j_columns}``; the store fills them in.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.handles import raise_if_closed
from alkstore_contract.resolution import LAST_ERROR_EXPIRED, LAST_ERROR_MAX_ATTEMPTS, EnqueueOptions, encode_payloads
from alkstore_contract.surface import JobHandle
from alkstore_contract.types import Job, QueueOpts
from alkstore_contract.validation import (
    INT64_MAX,
    INT64_MIN,
    Duration,
    JobId,
    encode_payload,
    validate_batch_size,
    validate_job_id,
    validate_job_ids,
    validate_worker_id,
)
from alkstore_postgres.handle import PgJobHandle
from alkstore_postgres.rows import c2_order_key, job_from_record
from alkstore_postgres.timing import NewJobParams, new_job_params

if TYPE_CHECKING:
    from alkstore_postgres.store import PgStore

CLOCK_CTE = "clock AS (SELECT COALESCE($1::timestamptz, statement_timestamp()) AS now)"
"""``now`` read once per statement: the injected clock's instant ($1), else the server's."""
NOW = "(SELECT now FROM clock)"


def row_id(job_id: JobId) -> int | None:
    """The ``bigint`` id a job id names, or ``None`` for ids this engine never hands out (not found, not an error)."""
    if isinstance(job_id, int) and INT64_MIN <= job_id <= INT64_MAX:
        return job_id
    return None


class PgQueue:
    """A queue of a ``PgStore``; each operation is one statement (one round trip, atomic by itself)."""

    handle_class: ClassVar[type[PgJobHandle]] = PgJobHandle

    INSERT_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE}
INSERT INTO {{jobs}} (queue, payload, state, priority, max_attempts, run_at, expires_at, enqueued_at,
                      visibility_timeout_s, backoff_base_s, dead_letter_retention_s)
SELECT $2, p.payload, 'ready', $3, $4,
       COALESCE($5::timestamptz, c.now + $6::bigint * interval '1 microsecond'),
       COALESCE($7::timestamptz, c.now + $8::bigint * interval '1 microsecond'),
       c.now, $9, $10, $11
FROM clock AS c, unnest($12::text[]) WITH ORDINALITY AS p(payload, ord)
ORDER BY p.ord
RETURNING id
"""
    """enqueue and enqueue_many: one INSERT over ``unnest`` of the payloads, so a batch is atomic (E11).

    Rows are inserted in input order, so the identity column hands them
    increasing ids in that order and sorting the returned ids restores it.
    """

    CLAIM_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
ready AS MATERIALIZED (
    SELECT id, priority, run_at FROM {{jobs}}
    WHERE queue = $2 AND state = 'ready' AND run_at <= {NOW}
      AND (expires_at IS NULL OR expires_at > {NOW})
    ORDER BY priority DESC, run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
),
lapsed AS MATERIALIZED (
    SELECT id, priority, run_at FROM {{jobs}}
    WHERE queue = $2 AND state = 'processing' AND lease_expires_at <= {NOW} AND attempts < max_attempts
      AND (expires_at IS NULL OR expires_at > {NOW})
    ORDER BY priority DESC, run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
),
picked AS MATERIALIZED (
    SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed) AS candidates
    ORDER BY priority DESC, run_at, id
    LIMIT $3
)
UPDATE {{jobs}} AS j
SET state = 'processing', claimed_by = $4, token = $5, attempts = j.attempts + 1,
    lease_expires_at = {NOW} + {{schema}}.seconds_interval(j.visibility_timeout_s)
WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING {{j_columns}}
"""
    """claim_batch: lock up to n claimable rows, SKIP LOCKED, then update exactly those (C1–C5).

    The C1 predicate is an OR of two shapes (ready and due; processing with a
    lapsed lease and attempts left), and no single index serves both in C2
    order, so each shape has its own MATERIALIZED CTE with every filter
    inside it, its own partial index, and its own ``LIMIT n ... FOR UPDATE
    SKIP LOCKED``. ``picked`` keeps the best n of the at most 2n locked
    candidates, and the UPDATE changes the ids of ``picked`` alone, so at most
    n rows change. It looks them up as ``id = ANY(ARRAY(...))``, a primary-key
    probe per id whatever the planner believes of the table: joined ``FROM
    picked`` instead, a table that vacuum had just left with few live rows was
    planned as a full scan of the primary key, dead entries and all, per
    claim. The extra locks end with the statement a moment later. (``WHERE id
    IN (SELECT ... LIMIT n)`` could re-run the subquery and update more than n
    rows; a materialized CTE is evaluated once.) Under READ COMMITTED a
    row changed by a concurrent claim since the snapshot is re-checked
    against the CTE's filters when locked, so it is never handed out twice.
    """

    ACK_BATCH_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
acked AS (
    DELETE FROM {{jobs}}
    WHERE queue = $2 AND id = ANY($3::bigint[]) AND state = 'processing' AND lease_expires_at > {NOW}
    RETURNING 1
)
SELECT count(*) FROM acked
"""
    """ack_batch (B1): one DELETE; ``ANY`` counts a duplicated id once."""

    CANCEL_SQL: ClassVar[str] = "DELETE FROM {jobs} WHERE queue = $1 AND id = $2 RETURNING id"
    """cancel (B2): any state; needs no clock."""

    GET_SQL: ClassVar[str] = "SELECT {columns} FROM {jobs} WHERE queue = $1 AND id = $2"
    """get_job (B3)."""

    SWEEP_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
purged AS (
    DELETE FROM {{jobs}}
    WHERE queue = $2 AND state = 'dead' AND dead_letter_retention_s IS NOT NULL
      AND {{schema}}.purge_at(died_at, dead_letter_retention_s) <= {NOW}
    RETURNING id
),
expired AS (
    UPDATE {{jobs}}
    SET state = 'dead', last_error = $3, died_at = {NOW}, lease_expires_at = NULL, claimed_by = NULL, token = NULL
    WHERE queue = $2 AND state IN ('ready', 'processing') AND expires_at <= {NOW}
    RETURNING id
),
exhausted AS (
    UPDATE {{jobs}}
    SET state = 'dead', last_error = $4, died_at = {NOW}, lease_expires_at = NULL, claimed_by = NULL, token = NULL
    WHERE queue = $2 AND state = 'processing' AND lease_expires_at <= {NOW} AND attempts >= max_attempts
      AND (expires_at IS NULL OR expires_at > {NOW})
    RETURNING id
)
SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM exhausted)
"""
    """sweep_expired (X2, X3): steps (a) purge, (b) expire, (c) exhaust as one statement.

    One statement is one transaction with one ``now`` (three statements would
    each read the server clock). All three steps see the same snapshot, and
    their row sets are disjoint by construction ((a) only rows already dead,
    (c) excludes what (b) takes), so the result is exactly that of running
    (a), (b), (c) in order: a job dead-lettered by this sweep is purged only
    by a later one. A concurrent sweep blocks on the rows this one changes
    and re-checks them once it commits; they are dead by then and fail the
    state filter, so each job is moved once and the counts add up (X3).
    """

    def __init__(self, store: PgStore, name: str, opts: QueueOpts) -> None:
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
    def store(self) -> PgStore:
        return self._store

    def _closed_check(self, op: str) -> None:
        raise_if_closed(self._store.closed, f"{op} on queue {self._name!r}")

    async def enqueue(
        self,
        payload: object,
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        max_attempts: int | None = None,
        priority: int = 0,
    ) -> JobId:
        """Store one job (E1–E10); everything is validated before any I/O."""
        self._closed_check("enqueue()")
        payload_json = encode_payload(payload)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        ids = await self._insert("enqueue()", [payload_json], options)
        return ids[0]

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
        """Store every job or none, from one ``now``; ids in input order (E11)."""
        self._closed_check("enqueue_many()")
        if not isinstance(payloads, list | tuple):
            raise InvalidArgument(f"payloads={payloads!r}: must be a list or tuple of payloads")
        payload_jsons = encode_payloads(payloads)
        options = EnqueueOptions.validate(
            delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
        )
        if not payload_jsons:
            return []
        return await self._insert("enqueue_many()", payload_jsons, options)

    async def _insert(self, op: str, payload_jsons: list[str], options: EnqueueOptions) -> list[JobId]:
        params: NewJobParams = new_job_params(options, self._opts)
        expires = params.expires_at
        rows = await self._store.fetch(
            op,
            self.INSERT_SQL,
            self._store.now_param(),
            self._name,
            params.priority,
            params.max_attempts,
            params.run_at.absolute,
            params.run_at.offset_us,
            None if expires is None else expires.absolute,
            None if expires is None else expires.offset_us,
            params.visibility_timeout_s,
            params.backoff_base_s,
            params.dead_letter_retention_s,
            payload_jsons,
        )
        return sorted(int(row["id"]) for row in rows)

    async def claim_one(self, worker_id: str) -> JobHandle | None:
        """``claim_batch(worker_id, 1)``'s handle, or ``None`` when nothing is claimable."""
        handles = await self.claim_batch(worker_id, 1)
        return handles[0] if handles else None

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """Up to ``n`` claimable jobs in C2 order; ``n <= 0`` touches no storage (C5)."""
        self._closed_check("claim_batch()")
        worker_id = validate_worker_id(worker_id)
        n = validate_batch_size(n)
        if n <= 0:
            return []
        token = secrets.token_hex(16)
        rows = await self._store.fetch(
            "claim_batch()", self.CLAIM_SQL, self._store.now_param(), self._name, min(n, INT64_MAX), worker_id, token
        )
        self._store.upkeep.note(len(rows))
        jobs = sorted((job_from_record(row) for row in rows), key=c2_order_key)
        handles: list[JobHandle] = [self.handle_class(self, job, token) for job in jobs]
        return handles

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """Delete the listed processing jobs of this queue with unexpired leases; how many (B1)."""
        self._closed_check("ack_batch()")
        row_ids = sorted({rid for rid in map(row_id, validate_job_ids(ids)) if rid is not None})
        if not row_ids:
            return 0
        rows = await self._store.fetch("ack_batch()", self.ACK_BATCH_SQL, self._store.now_param(), self._name, row_ids)
        acked = int(rows[0][0])
        self._store.upkeep.note(acked)
        return acked

    async def cancel(self, job_id: JobId) -> bool:
        """Delete the job in any state; ``True`` iff one was deleted (B2)."""
        self._closed_check("cancel()")
        rid = row_id(validate_job_id(job_id))
        if rid is None:
            return False
        rows = await self._store.fetch("cancel()", self.CANCEL_SQL, self._name, rid)
        self._store.upkeep.note(len(rows))
        return bool(rows)

    async def get_job(self, job_id: JobId) -> Job | None:
        """A fresh snapshot of the job, or ``None`` (B3)."""
        self._closed_check("get_job()")
        rid = row_id(validate_job_id(job_id))
        if rid is None:
            return None
        rows = await self._store.fetch("get_job()", self.GET_SQL, self._name, rid)
        return job_from_record(rows[0]) if rows else None

    async def sweep_expired(self) -> int:
        """Dead-letter expired jobs and exhausted lapsed leases, purge retained dead; how many moved (X2)."""
        self._closed_check("sweep_expired()")
        rows = await self._store.fetch(
            "sweep_expired()",
            self.SWEEP_SQL,
            self._store.now_param(),
            self._name,
            LAST_ERROR_EXPIRED,
            LAST_ERROR_MAX_ATTEMPTS,
        )
        moved = int(rows[0][0])
        self._store.upkeep.note(moved)
        return moved
