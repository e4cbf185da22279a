"""Creating and migrating one store's schema: versioned, idempotent, safe when openers race.

A store lives in its own Postgres schema. ``schema_version`` holds one row with
the number of migration steps applied; opening a store applies the missing
steps in one transaction, so a schema is never seen half-migrated.

Two processes opening the same schema at once would otherwise race on
``CREATE SCHEMA IF NOT EXISTS`` (it can fail with a unique violation) and on
the steps themselves, so creation and migration run under
``pg_advisory_xact_lock`` on a key derived from the schema name; the second
opener waits, then finds the work done. An up-to-date schema is recognised
before any DDL or lock, so a role without CREATE rights on the database can
open a store an administrator created.

Every template names the schema as ``{schema}`` (already quoted).
"""

from __future__ import annotations

from typing import Any

from alkstore_contract.validation import describe_value
from alkstore_postgres.errors import SchemaVersionError
from alkstore_postgres.location import quote_ident

_JOBS_TABLE = """
CREATE TABLE {schema}.jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue text NOT NULL,
    payload text NOT NULL,
    state text NOT NULL CHECK (state IN ('ready', 'processing', 'dead')),
    priority bigint NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL,
    run_at timestamptz NOT NULL,
    expires_at timestamptz,
    enqueued_at timestamptz NOT NULL,
    lease_expires_at timestamptz,
    claimed_by text,
    token text,
    visibility_timeout_s float8 NOT NULL,
    backoff_base_s float8 NOT NULL,
    dead_letter_retention_s float8,
    last_error text,
    died_at timestamptz
) WITH (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
)
"""
"""The jobs table.

``payload`` is ``text`` holding ``encode_payload``'s JSON, not ``jsonb``: jsonb
rejects the ``\\u0000`` escape, reorders and de-duplicates object keys and
rewrites numbers (``1e300`` comes back as 301 digits, which reads back as an
int), so a payload would not round-trip equal (E8). Nothing queries inside it.

Every row is inserted, updated two to four times (claim, heartbeats,
retry/fail) and deleted within minutes, so the table is mostly dead tuples
unless vacuum keeps up. The defaults wait for 20 % of the table to be dead
before vacuuming, which on a queue means index scans wading through dead
entries on every claim; 1 % (plus 500 rows) keeps the claim path short.
Frequent analyze keeps the planner aware that ``ready`` rows come and go.
``fillfactor = 80`` leaves room on each page for the new row versions of
updates so they stay on the row's page; few updates here can be HOT, since
a claim, retry, fail or heartbeat changes ``state`` or the lease, which the
claim-path indexes cover.
"""

_SECONDS_INTERVAL_FUNCTION = """
CREATE FUNCTION {schema}.seconds_interval(seconds float8) RETURNS interval
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
    SELECT (trunc(seconds) * 1000000::float8 + round((seconds - trunc(seconds)) * 1000000::float8))
           * interval '1 microsecond'
$fn$
"""
"""Stored float seconds as an interval, rounded exactly as Python's ``timedelta(seconds=...)``.

The contract computes ``now + timedelta(seconds=s)``: whole seconds exactly,
then the fraction times 10**6 rounded half to even (``round(float8)`` is
``rint``). ``s * interval '1 second'`` rounds ``s * 10**6`` instead, and
disagrees by a microsecond for a few percent of fractional durations, so a
lease computed here would not equal the one the contract's model computes.
"""

_INDEXES = (
    # The claim path, ready branch: an ordered scan in C2 order that stops after n rows.
    "CREATE INDEX jobs_ready_claim ON {schema}.jobs (queue, priority DESC, run_at, id) WHERE state = 'ready'",
    # The claim path, reclaim branch, and sweep step (c): a range scan over lapsed leases only,
    # instead of walking every in-flight job on each claim.
    "CREATE INDEX jobs_processing_lease ON {schema}.jobs (queue, lease_expires_at) WHERE state = 'processing'",
    # Sweep step (b): live jobs that can expire.
    "CREATE INDEX jobs_live_expiry ON {schema}.jobs (queue, expires_at)"
    " WHERE expires_at IS NOT NULL AND state IN ('ready', 'processing')",
    # Sweep step (a): dead jobs that a retention will purge (retention None keeps them out of the index).
    "CREATE INDEX jobs_dead_retention ON {schema}.jobs (queue, died_at)"
    " WHERE state = 'dead' AND dead_letter_retention_s IS NOT NULL",
)

_PURGE_AT_FUNCTION = """
CREATE FUNCTION {schema}.purge_at(died_at timestamptz, retention_s float8) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$ BEGIN RETURN died_at + {schema}.seconds_interval(retention_s); END $fn$
"""
"""When a dead job's retention is over: ``died_at`` plus the retention, as sweep step (a) computes it.

``timestamptz + interval`` is only STABLE (an interval with days or months
depends on the time zone), so it cannot be indexed as it stands; this one
adds microseconds only, which no time zone changes, so it is IMMUTABLE and its
result can be indexed. plpgsql, because a SQL function would be inlined back
into the STABLE expression before the index checks it.
"""

_PURGE_INDEX = (
    _PURGE_AT_FUNCTION,
    # Sweep step (a) as a range scan over the jobs whose retention is over, however many are still kept.
    "CREATE INDEX jobs_dead_purge ON {schema}.jobs (queue, {schema}.purge_at(died_at, dead_letter_retention_s))"
    " WHERE state = 'dead' AND dead_letter_retention_s IS NOT NULL",
    # jobs_dead_retention's died_at bounds nothing when retentions differ: every kept dead job was read.
    "DROP INDEX {schema}.jobs_dead_retention",
)

_UNIQUE_KEYS = (
    # Contract K1–K4 (2.1): a job's unique key, NULL for a job enqueued without one.
    "ALTER TABLE {schema}.jobs ADD COLUMN unique_key text",
    # One unfinished job per key and queue: a dead job holds none, an acked or cancelled one is gone.
    # enqueue_unique's INSERT names it in ON CONFLICT, so concurrent ones from any process store one job.
    "CREATE UNIQUE INDEX jobs_unique_key ON {schema}.jobs (queue, unique_key)"
    " WHERE unique_key IS NOT NULL AND state <> 'dead'",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (_JOBS_TABLE, _SECONDS_INTERVAL_FUNCTION),
    _INDEXES,
    _PURGE_INDEX,
    _UNIQUE_KEYS,
)
"""Step ``i`` brings a schema from version ``i`` to ``i + 1``; append steps, never edit shipped ones."""

LATEST_VERSION = len(MIGRATIONS)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS {schema}.schema_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version integer NOT NULL
)
"""


def _lock_key(schema: str) -> str:
    return f"alkstore schema {schema}"


async def _read_version(conn: Any, schema: str) -> int | None:
    """The applied version, ``None`` when the schema or its version table does not exist yet."""
    table = f"{quote_ident(schema)}.schema_version"
    if await conn.fetchval("SELECT to_regclass($1)", table) is None:
        return None
    version: int | None = await conn.fetchval(f"SELECT version FROM {table}")
    return version


def _check_not_newer(schema: str, version: int) -> None:
    if version > LATEST_VERSION:
        raise SchemaVersionError(
            f"schema {describe_value(schema)} is at version {version}, newer than this alkstore knows "
            f"({LATEST_VERSION}); upgrade alkstore rather than open it with an older engine"
        )


async def ensure_schema(conn: Any, schema: str, *, target: int = LATEST_VERSION) -> int:
    """Create or migrate ``schema`` up to ``target`` on the asyncpg connection ``conn``; return the version.

    ``target`` below the latest exists so tests can build an older schema and
    watch an open migrate it.
    """
    current = await _read_version(conn, schema)
    if current is not None:
        _check_not_newer(schema, current)
        if current >= target:
            return current
    quoted = quote_ident(schema)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", _lock_key(schema))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quoted}")
        await conn.execute(_VERSION_TABLE.format(schema=quoted))
        current = await _read_version(conn, schema) or 0
        _check_not_newer(schema, current)
        for step in MIGRATIONS[current:target]:
            for statement in step:
                await conn.execute(statement.format(schema=quoted))
        version = max(current, target)
        await conn.execute(
            f"INSERT INTO {quoted}.schema_version (version) VALUES ($1)"
            " ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
            version,
        )
    return version
