"""The Postgres engine's storage driver: the kit's ``StorageDriver`` as one SQL statement per step.

Every step is one statement on a pooled connection, so it is one transaction
and one round trip, atomic by itself. Every statement that needs the time
starts with the ``clock`` CTE, which reads ``COALESCE($1::timestamptz,
statement_timestamp())`` once: the kit's ``now`` when the store was opened
with a clock, else (``now=None``, NULL) the database server's (contract T3),
so all worker hosts share one clock. Durations arrive as exact microseconds
(``duration_us``: ``$n::bigint * interval '1 microsecond'``); stamped float
seconds go through the schema's ``seconds_interval``, which rounds as
Python's ``timedelta`` does, so an instant computed here equals the one the
contract computes, to the microsecond.

The SQL is a class attribute per step (``INSERT_SQL`` … ``SWEEP_SQL``), so a
subclass can replace one statement (the project's broken-engine mutants do).

Network faults (contract N1–N3). Each statement is bounded three ways:
acquiring a connection (one the store holds idle, else waiting for a free one
in the pool or opening a new one: ``alkstore_postgres.held``) gives up after
``connect_timeout_s``; the statement gives up after ``op_timeout_s`` (0.9
to 1 times it: ``alkstore_postgres.deadlines``), after which asyncpg sends the
server a cancel request, itself bounded by both; releasing the connection waits at most
``connect_timeout_s`` for that cancel and otherwise terminates the connection.
So a step during an outage raises ``StoreUnavailable``
(``ServerConnectionError``) within ``outage_bound_s`` = ``2 ×
connect_timeout_s + op_timeout_s``, never hangs. A connection that broke or
timed out is dropped, and the pool opens a fresh one on the next acquire, so
the same open store serves again as soon as the server answers (N2). A
statement is never retried: after a lost answer nobody knows whether it
committed, and replaying an insert or a claim could store or hand out a job
twice (N3); the caller is told the outcome is unknown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, ClassVar, Self, cast

import asyncpg

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.kit import NewJobs, duration_us, int_job_id, int_job_ids, jobs_from_rows
from alkstore_contract.types import Job, JobId
from alkstore_contract.validation import describe_value
from alkstore_postgres.connection import (
    CONNECTION_ERRORS,
    StatelessConnection,
    application_name,
    is_connection_error,
)
from alkstore_postgres.errors import ServerConnectionError
from alkstore_postgres.held import HeldConnections
from alkstore_postgres.location import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_OP_TIMEOUT_S,
    outage_bound_s,
    redact_dsn,
    validate_schema_name,
)
from alkstore_postgres.schema import ensure_schema
from alkstore_postgres.statements import CLOCK_CTE, MICROS, NOW, placeholders
from alkstore_postgres.upkeep import Upkeep

DEFAULT_SCHEMA = "alkstore"

_FENCE = f"id = $2 AND token = $3 AND state = 'processing' AND lease_expires_at > {NOW}"
"""H1: this claim (id and token) still holds the job and its lease is live, checked in the statement that acts."""
_RELEASE = "lease_expires_at = NULL, claimed_by = NULL, token = NULL"
_CLAIM_LIMIT = "(SELECT $3::bigint)"
"""The claim's ``n`` as a value no plan can see, so the server plans the claim once per connection, not per call.

asyncpg prepares each statement and Postgres picks, per execution, its
generic plan or a custom one made for the parameters. With a bare ``LIMIT
$3``, once the table has statistics (an ``ANALYZE``, which autovacuum runs),
a custom plan that knows ``n`` is costed far cheaper than the generic plan
(which guesses a tenth of the rows), so every claim was planned afresh (201
custom plans of 201 claims): measured with the backend's
``/proc/PID/schedstat``, 2 µs of the claim's 11 µs of server CPU per job, a
backlog of 20,000 claimed 100 at a time. A sub-select's value is known only
when the statement runs, to custom and generic plans alike, so the two cost
the same and the server keeps the generic one after its first five
executions; the plan's shape (the index scans) is the same, and the
statement still takes at most ``n``.
"""


def _timeout(arg: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidArgument(f"{arg}={describe_value(value)}: a timeout must be a positive number of seconds")
    return float(value)


def _pool_size(arg: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(f"{arg}={describe_value(value)}: a pool size must be an int >= {minimum}")
    return value


def pg_jobs(rows: Sequence[Any]) -> list[Job]:
    """``jobs_from_rows``, with a ``run_at`` stored as -infinity or infinity read back as the instant it was.

    asyncpg sends ``datetime.min`` and ``datetime.max`` (UTC) as ``-infinity``
    and ``infinity``, which compare and sort as those instants do, and reads
    them back as naive datetimes; the caller gave an aware one (E3). Only
    ``run_at`` is ever sent: every other instant is computed in the statement.
    """
    jobs = jobs_from_rows(rows)
    for index, job in enumerate(jobs):
        if job.run_at.tzinfo is None:
            jobs[index] = replace(job, run_at=job.run_at.replace(tzinfo=UTC))
    return jobs


def _insert_args(queue: str, jobs: NewJobs) -> tuple[object, ...]:
    """$2 … $10 of ``INSERT_SQL`` and ``INSERT_UNIQUE_SQL``: the queue and what every job of one insert shares."""
    expires_s = jobs.expires_s
    return (
        queue,
        jobs.priority,
        jobs.max_attempts,
        jobs.run_at,
        duration_us(jobs.delay_s),
        None if expires_s is None else duration_us(expires_s),
        jobs.visibility_timeout_s,
        jobs.backoff_base_s,
        jobs.dead_letter_retention_s,
    )


class PgDriver:
    """The jobs table of one schema, through one asyncpg pool. Create it with ``open``."""

    INSERT_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE}
INSERT INTO {{jobs}} (queue, payload, state, priority, max_attempts, run_at, expires_at, enqueued_at,
                      visibility_timeout_s, backoff_base_s, dead_letter_retention_s)
SELECT $2, p.payload, 'ready', $3, $4, COALESCE($5::timestamptz, c.now + $6{MICROS}), c.now + $7{MICROS},
       c.now, $8, $9, $10
FROM clock AS c, unnest($11::text[]) WITH ORDINALITY AS p(payload, ord)
ORDER BY p.ord
RETURNING id
"""
    """insert (E1–E8, E11): one INSERT over ``unnest`` of the payloads, so a batch is atomic.

    ``run_at`` is the caller's instant ($5) or ``now`` + the delay ($6);
    ``expires_at`` is ``now`` + ``expires`` ($7), NULL without one. Rows are
    inserted in input order, so the identity column hands them increasing ids
    in that order and sorting the returned ids restores it.
    """

    INSERT_UNIQUE_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
stored AS (
    INSERT INTO {{jobs}} (queue, payload, state, priority, max_attempts, run_at, expires_at, enqueued_at,
                          visibility_timeout_s, backoff_base_s, dead_letter_retention_s, unique_key)
    SELECT $2, $11, 'ready', $3, $4, COALESCE($5::timestamptz, c.now + $6{MICROS}), c.now + $7{MICROS},
           c.now, $8, $9, $10, $12
    FROM clock AS c
    ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND state <> 'dead' DO NOTHING
    RETURNING id
)
SELECT id, true FROM stored
UNION ALL
SELECT id, false FROM {{jobs}}
WHERE queue = $2 AND unique_key = $12 AND state <> 'dead' AND NOT EXISTS (SELECT 1 FROM stored)
"""
    """insert_unique (K1–K3): the insert stores nothing while an unfinished job of the queue holds the key.

    The partial unique index ``jobs_unique_key`` decides, across every
    connection and process: a concurrent insert of the key waits for the other
    to commit, then does nothing. The holder is read in the same statement;
    when it committed after this statement's snapshot (or finished since), the
    read finds nothing and the driver runs the statement again.
    """

    CLAIM_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
ready AS MATERIALIZED (
    SELECT ctid, priority, run_at, id FROM {{jobs}}
    WHERE queue = $2 AND state = 'ready' AND run_at <= {NOW}
      AND (expires_at IS NULL OR expires_at > {NOW})
    ORDER BY priority DESC, run_at, id
    LIMIT {_CLAIM_LIMIT}
    FOR UPDATE SKIP LOCKED
),
lapsed AS MATERIALIZED (
    SELECT ctid, priority, run_at, id FROM {{jobs}}
    WHERE queue = $2 AND state = 'processing' AND lease_expires_at <= {NOW} AND attempts < max_attempts
      AND (expires_at IS NULL OR expires_at > {NOW})
    ORDER BY priority DESC, run_at, id
    LIMIT {_CLAIM_LIMIT}
    FOR UPDATE SKIP LOCKED
),
picked AS MATERIALIZED (
    SELECT ctid FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed) AS candidates
    ORDER BY priority DESC, run_at, id
    LIMIT {_CLAIM_LIMIT}
)
UPDATE {{jobs}} AS j
SET state = 'processing', claimed_by = $4, token = $5, attempts = j.attempts + 1,
    lease_expires_at = {NOW} + {{schema}}.seconds_interval(j.visibility_timeout_s)
WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
RETURNING {{j_columns}}
"""
    """claim (C1–C5): lock up to n claimable rows, SKIP LOCKED, then update exactly those.

    The C1 predicate is an OR of two shapes (ready and due; processing with a
    lapsed lease and attempts left), and no single index serves both in C2
    order, so each shape has its own MATERIALIZED CTE with every filter
    inside it, its own partial index, and its own ``LIMIT n ... FOR UPDATE
    SKIP LOCKED``. ``picked`` keeps the best n of the at most 2n locked
    candidates, and the UPDATE changes the rows of ``picked`` alone, so at most
    n rows change. It finds them by their physical address, ``ctid =
    ANY(ARRAY(...))``, a TID scan that reads each row's page and nothing
    else: a ``ctid`` cannot change while the row is locked, and every row of
    ``picked`` is locked by this statement. Looked up by id instead, each of
    the n rows cost a descent of the primary key (about 3 of a claim's 10
    buffer reads per job), and joined ``FROM picked`` a table that vacuum had
    just left with few live rows was planned as a full scan of the primary
    key, dead entries and all, per claim. The extra locks end with the
    statement a moment later. (``WHERE ctid IN (SELECT ... LIMIT n)`` could
    re-run the subquery and update more than n rows; a materialized CTE is
    evaluated once.) Under READ COMMITTED a row changed by a concurrent
    statement since the snapshot is re-checked against the CTE's filters
    when locked, so it is never handed out twice (C4); the one such row that
    could still pass them, a lapsed lease a heartbeat renewed by less than
    the time the claim took to reach it, is left for the next claim (the
    UPDATE's scan sees the row as of the snapshot, so it does not find the
    newer version), never claimed twice.
    """

    ACK_SQL: ClassVar[str] = f"WITH {CLOCK_CTE} DELETE FROM {{jobs}} WHERE {_FENCE} RETURNING id"
    """ack (H2): the job is gone, if this claim still holds it."""

    RETRY_READY_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
UPDATE {{jobs}}
SET state = 'ready', run_at = {NOW} + $4{MICROS}, last_error = COALESCE($5, last_error), {_RELEASE}
WHERE {_FENCE}
RETURNING id
"""
    """retry (R1–R3): ready again after the delay the kit decided; an error given replaces the stored one."""

    RELEASE_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
UPDATE {{jobs}}
SET state = 'ready', run_at = {NOW} + $4{MICROS}, attempts = attempts - 1, {_RELEASE}
WHERE {_FENCE}
RETURNING id
"""
    """release (L1–L3): ready again after the delay, the claim's attempt given back; the last error kept."""

    DEAD_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
UPDATE {{jobs}}
SET state = 'dead', last_error = $4, died_at = {NOW}, {_RELEASE}
WHERE {_FENCE}
RETURNING id
"""
    """dead_letter (R4, D1): dead now, with the ``last_error`` the kit decided."""

    HEARTBEAT_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
UPDATE {{jobs}}
SET lease_expires_at = {NOW} + $4{MICROS}
WHERE {_FENCE}
RETURNING id
"""
    """heartbeat (H3): an absolute reset from now, by the lease the kit resolved."""

    ACK_BATCH_SQL: ClassVar[str] = f"""
WITH {CLOCK_CTE},
acked AS (
    DELETE FROM {{jobs}}
    WHERE queue = $2 AND id = ANY($3::bigint[]) AND state = 'processing' AND lease_expires_at > {NOW}
    RETURNING 1
)
SELECT count(*) FROM acked
"""
    """ack_batch (B1): one DELETE of the listed jobs with a live lease, whoever holds them."""

    ACK_CLAIMS_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
DELETE FROM {{jobs}} AS j
USING unnest($2::bigint[], $3::text[]) AS c(id, token)
WHERE j.id = c.id AND j.token = c.token AND j.state = 'processing' AND j.lease_expires_at > {NOW}
RETURNING j.id
"""
    """ack_claims (many acks, H1/H2 each): one DELETE of the listed jobs each still held by its own claim's token."""

    HEARTBEAT_CLAIMS_SQL: ClassVar[str] = f"""WITH {CLOCK_CTE}
UPDATE {{jobs}} AS j
SET lease_expires_at = {NOW} + c.lease_us{MICROS}
FROM unnest($2::bigint[], $3::text[], $4::bigint[]) AS c(id, token, lease_us)
WHERE j.id = c.id AND j.token = c.token AND j.state = 'processing' AND j.lease_expires_at > {NOW}
RETURNING j.id
"""
    """heartbeat_claims (many heartbeats, H3 each): one UPDATE renewing each listed job its own claim still holds."""

    CANCEL_SQL: ClassVar[str] = "DELETE FROM {jobs} WHERE queue = $1 AND id = $2 RETURNING id"
    """cancel (B2): any state; needs no clock."""

    GET_SQL: ClassVar[str] = "SELECT {columns} FROM {jobs} WHERE queue = $1 AND id = $2"
    """get (B3)."""

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
    SET state = 'dead', last_error = $3, died_at = {NOW}, {_RELEASE}
    WHERE queue = $2 AND state IN ('ready', 'processing') AND expires_at <= {NOW}
    RETURNING id
),
exhausted AS (
    UPDATE {{jobs}}
    SET state = 'dead', last_error = $4, died_at = {NOW}, {_RELEASE}
    WHERE queue = $2 AND state = 'processing' AND lease_expires_at <= {NOW} AND attempts >= max_attempts
      AND (expires_at IS NULL OR expires_at > {NOW})
    RETURNING id
)
SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM exhausted)
"""
    """sweep (X2, X3): steps (a) purge, (b) expire, (c) exhaust as one statement.

    One statement is one transaction with one ``now`` (three statements would
    each read the server clock). All three steps see the same snapshot, and
    their row sets are disjoint by construction ((a) only rows already dead,
    (c) excludes what (b) takes), so the result is exactly that of running
    (a), (b), (c) in order: a job dead-lettered by this sweep is purged only
    by a later one. A concurrent sweep blocks on the rows this one changes
    and re-checks them once it commits; they are dead by then and fail the
    state filter, so each job is moved once and the counts add up (X3).
    """

    def __init__(
        self,
        pool: Any,
        *,
        schema: str,
        op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        self._pool = pool
        self._schema = schema
        self._op_timeout_s = op_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._placeholders = placeholders(schema)
        self._rendered: dict[str, str] = {}
        self.connections = HeldConnections(pool, connect_timeout_s, op_timeout_s)
        """The pool's connections this store holds between statements (see ``held``)."""
        self.upkeep = Upkeep(self.connections, self._placeholders["jobs"])
        """Vacuums the jobs table as the driver's own statements leave dead rows (see ``upkeep``)."""

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        min_size: int = 1,
        max_size: int = 10,
        op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> Self:
        """Check the connection settings, create the pool, create or migrate the schema.

        The settings are this engine's own (the kit knows nothing of DSNs and
        pools), so they are checked here, all before the first connection.
        """
        if not isinstance(dsn, str) or not dsn:
            raise InvalidArgument(
                f"dsn={describe_value(dsn)}: must be a non-empty str such as postgresql://user@host:5432/db"
            )
        schema = validate_schema_name(schema)
        min_size = _pool_size("min_size", min_size, 0)
        max_size = _pool_size("max_size", max_size, max(min_size, 1))
        op_timeout_s = _timeout("op_timeout_s", op_timeout_s)
        connect_timeout_s = _timeout("connect_timeout_s", connect_timeout_s)
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                timeout=connect_timeout_s,
                # No command_timeout: the store bounds its statements itself (alkstore_postgres.deadlines).
                server_settings={"application_name": application_name(schema)},
                # Released without asyncpg's reset query: one round trip per operation, not two.
                connection_class=StatelessConnection,
            )
        except CONNECTION_ERRORS as exc:
            raise ServerConnectionError(f"open_store: could not connect to {redact_dsn(dsn)}: {exc!r}") from exc
        try:
            async with pool.acquire(timeout=connect_timeout_s) as conn:
                # The pool sets no statement timeout (the store's own is alkstore_postgres.deadlines): the
                # schema's check or migration as a whole gives up after op_timeout_s.
                async with asyncio.timeout(op_timeout_s):
                    await ensure_schema(conn, schema)
        except BaseException as exc:
            pool.terminate()
            if is_connection_error(exc):
                raise ServerConnectionError(
                    f"open_store: the connection to {redact_dsn(dsn)} failed while preparing schema "
                    f"{describe_value(schema)}: {exc!r}"
                ) from exc
            raise
        return cls(pool, schema=schema, op_timeout_s=op_timeout_s, connect_timeout_s=connect_timeout_s)

    @property
    def schema(self) -> str:
        """The schema holding this store's jobs table."""
        return self._schema

    def sql(self, template: str) -> str:
        """``template`` with this store's schema, table and column lists filled in (rendered once)."""
        text = self._rendered.get(template)
        if text is None:
            text = self._rendered[template] = template.format(**self._placeholders)
        return text

    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        """Run one statement on a pooled connection; a lost or silent server becomes ``ServerConnectionError``.

        Bounded as the module docstring says (N1). asyncpg's pool drops a
        connection that broke and opens a new one on the next acquire, so the
        store heals once the server answers (N2). The statement is not retried
        here: after a lost connection nobody knows whether it committed, and
        replaying a claim or an insert could duplicate it (N3).
        """
        try:
            return await self._fetch(self.sql(template), *args)
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            raise ServerConnectionError(
                f"{op}: the connection to the Postgres server failed ({exc!r}); the operation was not confirmed "
                "and may or may not have taken effect; the next operation uses a fresh connection"
            ) from exc

    def _fetch(self, sql: str, *args: object) -> Awaitable[list[Any]]:
        """One statement on a connection the store holds between statements (``alkstore_postgres.held``).

        A plain method handing back ``HeldConnections.fetch``'s coroutine, so
        a statement awaits one coroutine fewer; a subclass may write it as a
        coroutine function."""
        return self.connections.fetch(sql, *args)

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        rows = await self.fetch("insert", self.INSERT_SQL, now, *_insert_args(queue, jobs), jobs.payloads)
        return sorted(int(row["id"]) for row in rows)

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        args = (*_insert_args(queue, jobs), jobs.payloads[0], unique_key)
        while True:
            rows = await self.fetch("insert_unique", self.INSERT_UNIQUE_SQL, now, *args)
            if rows:
                return int(rows[0][0]), bool(rows[0][1])

    def transaction_problem(self, transaction: object) -> str | None:
        """W1–W4: an asyncpg connection (or a pool's) the caller holds inside a transaction it opened."""
        if not isinstance(transaction, asyncpg.connection.Connection | asyncpg.pool.PoolConnectionProxy):
            return "must be an asyncpg connection inside a transaction the caller opened"
        if transaction.is_closed():
            return "the connection is closed"
        if not transaction.is_in_transaction():
            return (
                "the connection is not inside a transaction: open one (conn.transaction()) so the job commits with it"
            )
        return None

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """W1–W4: ``INSERT_SQL`` on the caller's connection, inside its transaction; nothing here commits."""
        connection = cast(asyncpg.Connection, transaction)
        rows = await connection.fetch(self.sql(self.INSERT_SQL), now, *_insert_args(queue, jobs), jobs.payloads)
        return sorted(int(row["id"]) for row in rows)

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        rows = await self.fetch("claim", self.CLAIM_SQL, now, queue, n, worker_id, token)
        self.upkeep.claimed(len(rows))
        return pg_jobs(rows)

    async def _fenced(
        self, op: str, template: str, job_id: JobId, token: str, now: datetime | None, *args: object
    ) -> bool:
        """Run a handle's statement under the fence (``_FENCE``); ``True`` iff the claim still held the job."""
        row_id = int_job_id(job_id)
        if row_id is None:
            return False
        rows = await self.fetch(op, template, now, row_id, token, *args)
        self.upkeep.note(len(rows))
        return bool(rows)

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        return await self._fenced("ack", self.ACK_SQL, job_id, token, now)

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        return await self._fenced("retry", self.RETRY_READY_SQL, job_id, token, now, duration_us(delay_s), last_error)

    async def release(self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float) -> bool:
        return await self._fenced("release", self.RELEASE_SQL, job_id, token, now, duration_us(delay_s))

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        return await self._fenced("dead_letter", self.DEAD_SQL, job_id, token, now, last_error)

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        return await self._fenced("heartbeat", self.HEARTBEAT_SQL, job_id, token, now, duration_us(lease_s))

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        row_ids = int_job_ids(job_ids)
        if not row_ids:
            return 0
        rows = await self.fetch("ack_batch", self.ACK_BATCH_SQL, now, queue, row_ids)
        acked = int(rows[0][0])
        self.upkeep.note(acked)
        return acked

    async def ack_claims(self, queue: str, claims: Sequence[tuple[JobId, str]], now: datetime | None) -> list[JobId]:
        """Many handles' acks in one statement (the kit's ``AcksClaims``): one round trip for a worker's batch."""
        kept = [(row_id, token) for job_id, token in claims if (row_id := int_job_id(job_id)) is not None]
        if not kept:
            return []
        kept.sort()
        rows = await self.fetch("ack_claims", self.ACK_CLAIMS_SQL, now, [c[0] for c in kept], [c[1] for c in kept])
        self.upkeep.note(len(rows))
        return [row[0] for row in rows]

    async def heartbeat_claims(
        self, queue: str, claims: Sequence[tuple[JobId, str, float]], now: datetime | None
    ) -> list[JobId]:
        """Many handles' heartbeats in one statement (the kit's ``HeartbeatsClaims``)."""
        kept = sorted(
            (row_id, token, duration_us(lease_s))
            for job_id, token, lease_s in claims
            if (row_id := int_job_id(job_id)) is not None
        )
        if not kept:
            return []
        columns = [list(column) for column in zip(*kept, strict=True)]
        rows = await self.fetch("heartbeat_claims", self.HEARTBEAT_CLAIMS_SQL, now, *columns)
        return [row[0] for row in rows]

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        row_id = int_job_id(job_id)
        if row_id is None:
            return False
        rows = await self.fetch("cancel", self.CANCEL_SQL, queue, row_id)
        self.upkeep.note(len(rows))
        return bool(rows)

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        row_id = int_job_id(job_id)
        if row_id is None:
            return None
        rows = await self.fetch("get", self.GET_SQL, queue, row_id)
        return pg_jobs(rows)[0] if rows else None

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        rows = await self.fetch("sweep", self.SWEEP_SQL, now, queue, expired_error, exhausted_error)
        moved = int(rows[0][0])
        self.upkeep.note(moved)
        return moved

    async def close(self) -> None:
        """Stop the upkeep, then close the pool, letting statements in flight finish.

        A server that does not answer the goodbye within the outage bound gets
        its connections dropped instead, so closing never hangs either.
        """
        await self.upkeep.close()
        await self.connections.close()
        try:
            async with asyncio.timeout(outage_bound_s(self._op_timeout_s, self._connect_timeout_s)):
                await self._pool.close()
        except TimeoutError:
            self._pool.terminate()
