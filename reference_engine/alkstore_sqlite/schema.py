"""The on-disk layout of an alkstore SQLite file, and how a connection is prepared to use it.

One table, ``jobs``, holds every job of every queue. Instants are INTEGER
microseconds since the epoch (exact both ways, see ``alkstore_contract.instants``).
The two stamped durations that SQL adds to an instant — the visibility timeout
(a claim's lease) and the dead-letter retention (the sweep's purge) — are kept
twice: as REAL seconds, which read back exactly as the caller gave them, and as
INTEGER microseconds, computed once in Python the way ``datetime + timedelta``
rounds, so ``now + stamp`` in SQL equals ``now + timedelta(seconds=stamp)`` in
every engine and model to the microsecond.

``id`` is ``INTEGER PRIMARY KEY AUTOINCREMENT`` so ids grow in enqueue order
(C2's last key) and are never reused after a delete (an old handle or a stale id
in ``ack_batch`` can never hit a newer job).

The layout is written once, in ``layout.sql`` beside this module, which the Node
and Rust engines lay out their files by too. Its version lives in ``PRAGMA
user_version``. Opening a new file runs layout.sql; opening an older one applies
the missing steps of ``MIGRATIONS``, in one transaction either way; a file
written by a newer layout is refused rather than misread.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

import aiosqlite

from alkstore_contract.errors import AlkstoreError, InvalidArgument
from alkstore_contract.validation import describe_value

BUSY_TIMEOUT_MS = 30_000
"""How long a statement waits for another connection's write lock before failing.

Generous on purpose: under multi-process contention a caller should see a slow
claim, never ``database is locked``.
"""

Synchronous = Literal["NORMAL", "FULL"]
SYNCHRONOUS_MODES: tuple[Synchronous, ...] = ("NORMAL", "FULL")
DEFAULT_SYNCHRONOUS: Synchronous = "NORMAL"
"""``PRAGMA synchronous`` under WAL, as ``open_store(synchronous=...)`` takes it.

NORMAL (the default): a commit survives the crash or kill -9 of the process (the
WAL is in the OS's hands once written), but not a power loss or OS crash before
the next checkpoint's fsync. That is P3's promise. FULL fsyncs the WAL at every
commit, so a commit also survives a power loss, at the cost of a disk flush per
write. OFF and EXTRA are not offered: OFF breaks P3, and EXTRA adds nothing
under WAL.
"""


def validate_synchronous(value: object) -> Synchronous:
    """``value`` if it is one of ``SYNCHRONOUS_MODES``, else ``InvalidArgument`` naming it and the rule."""
    for mode in SYNCHRONOUS_MODES:
        if isinstance(value, str) and value == mode:
            return mode
    raise InvalidArgument(
        f"synchronous={describe_value(value)}: must be 'NORMAL' (the default: survives a process crash) "
        "or 'FULL' (also survives a power loss)"
    )


def connection_pragmas(synchronous: Synchronous = DEFAULT_SYNCHRONOUS) -> tuple[str, ...]:
    """The PRAGMAs every store connection runs first, with ``synchronous`` as validated."""
    return (
        f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
        # WAL: readers never block the writer nor the reverse, and a commit is one append.
        "PRAGMA journal_mode = WAL",
        f"PRAGMA synchronous = {synchronous}",
    )


CONNECTION_PRAGMAS = connection_pragmas()
"""A store's PRAGMAs with the default ``synchronous``; the benchmarks' raw baseline runs these too."""

LAYOUT_PATH = Path(__file__).with_name("layout.sql")
"""The project's one description of an alkstore SQLite file, which the Node and Rust engines lay out by too."""


def sql_statements(script: str) -> tuple[str, ...]:
    """``script``'s statements one by one, its comment lines left out.

    The layout is run one statement at a time inside the caller's transaction:
    ``executescript`` would commit that transaction first and give up its lock.
    """
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return tuple(statements)


LAYOUT: tuple[str, ...] = sql_statements(LAYOUT_PATH.read_text(encoding="utf-8"))
"""layout.sql's statements: a new file is laid out by these at once, at the latest version."""

SWEEP_INDEXES: tuple[str, ...] = (
    # Sweep (a) as a range scan over the dead jobs whose retention is over, however many are kept.
    # The expression and the WHERE are word for word those of the purge statement (queue.py's
    # SWEEP_PURGE_SQL): SQLite uses an expression or partial index only for the very same terms.
    "CREATE INDEX jobs_dead_purge ON jobs (queue, died_at + dead_letter_retention_us)"
    " WHERE state = 'dead' AND dead_letter_retention_us IS NOT NULL",
    # Sweep (b) over live jobs only: jobs_expiry also held every job that had died by expiry, and the
    # sweep's range `expires_at <= now` read all of those that were still kept, on every sweep.
    "DROP INDEX jobs_expiry",
    "CREATE INDEX jobs_live_expiry ON jobs (queue, expires_at)"
    " WHERE expires_at IS NOT NULL AND state IN ('ready', 'processing')",
    # Leases only where there are any: as (queue, state, lease_expires_at) every ready job had an
    # entry (with a NULL lease), one more index write per enqueue and per claim for nothing; the
    # purge no longer reads it. The claim's lapsed branch and sweep (c) say `state = 'processing'`.
    "DROP INDEX jobs_lease",
    "CREATE INDEX jobs_processing_lease ON jobs (queue, lease_expires_at) WHERE state = 'processing'",
)

UNIQUE_KEYS: tuple[str, ...] = (
    # Contract K1–K4 (2.1): a key per job, one unfinished job per key and queue.
    "ALTER TABLE jobs ADD COLUMN unique_key TEXT",
    "CREATE UNIQUE INDEX jobs_unique_key ON jobs (queue, unique_key) WHERE unique_key IS NOT NULL AND state <> 'dead'",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (SWEEP_INDEXES, UNIQUE_KEYS)
"""Step ``i`` brings a file from layout ``i + 1`` to ``i + 2``; append steps, never edit shipped ones.

A new file skips them: it is laid out by layout.sql, which is always the
latest layout (tests/test_sqlite_layout.py holds a file migrated from layout 1
to be the same as one layout.sql wrote).
"""

SCHEMA_VERSION = 1 + len(MIGRATIONS)


class SchemaVersionError(AlkstoreError):
    """The file was laid out by a newer alkstore_sqlite than this one."""


async def prepare_connection(conn: aiosqlite.Connection, synchronous: Synchronous = DEFAULT_SYNCHRONOUS) -> None:
    """Set the connection's PRAGMAs and create the layout if the file has none yet.

    The layout is created or migrated inside ``BEGIN IMMEDIATE``: it takes the
    write lock before reading ``user_version``, so two processes opening one file
    at once apply each step exactly once (the second waits, then sees the latest version).
    Runs once per store open, so its several thread hops do not matter.
    """
    for pragma in connection_pragmas(synchronous):
        await conn.execute(pragma)
    await conn.execute("BEGIN IMMEDIATE")
    try:
        rows = list(await conn.execute_fetchall("PRAGMA user_version"))
        version = int(rows[0][0])
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the file has alkstore_sqlite layout version {version}; this version of alkstore_sqlite "
                f"reads layout {SCHEMA_VERSION} and will not guess at a newer one"
            )
        if version < SCHEMA_VERSION:
            steps = (LAYOUT,) if version == 0 else MIGRATIONS[version - 1 :]
            for step in steps:
                for statement in step:
                    await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.rollback()
        raise
