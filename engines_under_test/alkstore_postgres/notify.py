"""An opt-in NOTIFY on enqueue, so a worker LISTENing wakes at once instead of polling.

Installed only by ``enable_notify`` (the worker runtime calls it when it
serves a Postgres store with ``notify=True``); a store nobody enables it on
runs exactly the statements it ran before. It is a statement-level
``AFTER INSERT`` trigger on the schema's jobs table: one ``pg_notify`` per
enqueue statement (``enqueue_many``'s batch is one statement, so one
notification), in the enqueue's own transaction, so a listener is told only
once the jobs are committed and never about a rolled-back insert. The payload
is empty: a worker wakes and claims, whatever queue the jobs are on.

Cost, stated rather than assumed: Postgres serialises the commits of
transactions that sent a notification (a global lock on the notification
queue), so enqueues from many connections at once queue on that lock;
``benchmarks/worker.py`` is where it is measured, not asserted.
"""

from __future__ import annotations

import hashlib
from typing import Any

from alkstore_postgres.location import quote_ident

CHANNEL_PREFIX = "alkstore_"
_FUNCTION = """
CREATE OR REPLACE FUNCTION {schema}.notify_enqueue() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], '');
    RETURN NULL;
END
$fn$
"""
_TRIGGER = """
CREATE TRIGGER jobs_notify_enqueue AFTER INSERT ON {schema}.jobs
FOR EACH STATEMENT EXECUTE FUNCTION {schema}.notify_enqueue('{channel}')
"""
_EXISTS = """
SELECT 1 FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'jobs_notify_enqueue'
"""
_DROP = "DROP TRIGGER IF EXISTS jobs_notify_enqueue ON {schema}.jobs"


def notify_channel(schema: str) -> str:
    """The channel a schema's enqueues notify: short and safe whatever the schema's name (63-byte limit)."""
    return CHANNEL_PREFIX + hashlib.sha256(schema.encode("utf-8")).hexdigest()[:24]


def _lock_key(schema: str) -> int:
    """An advisory-lock key of this schema's trigger DDL, so workers starting together do not race on it."""
    return int.from_bytes(hashlib.sha256(b"notify:" + schema.encode("utf-8")).digest()[:8], "big", signed=True)


async def enable_notify(connection: Any, schema: str) -> str:
    """Install (or refresh) the NOTIFY trigger on ``schema``'s jobs table; returns the channel to LISTEN on.

    ``connection`` is an open asyncpg connection; the store must exist (its
    jobs table is what the trigger is on). Idempotent, and safe when several
    workers start at once: the DDL runs under a transaction-scoped advisory lock.
    """
    channel = notify_channel(schema)
    quoted = quote_ident(schema)
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", _lock_key(schema))
        await connection.execute(_FUNCTION.format(schema=quoted))
        if await connection.fetchval(_EXISTS, f"{quoted}.jobs") is None:
            # created only when missing: CREATE TRIGGER locks the jobs table against enqueues for its moment
            await connection.execute(_TRIGGER.format(schema=quoted, channel=channel))
    return channel


async def disable_notify(connection: Any, schema: str) -> None:
    """Remove the trigger ``enable_notify`` installed; enqueue then sends no notification again."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", _lock_key(schema))
        await connection.execute(_DROP.format(schema=quote_ident(schema)))
