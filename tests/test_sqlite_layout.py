"""The Python reference engine lays out its file as reference_engine/alkstore_sqlite/layout.sql says.

Rule: the project's SQLite engines share one description of the file, layout.sql,
always the latest layout. The three engines lay a new file out by it (the Node
and Rust engines' own tests hold the files they write to it); a file of an older
layout reaches it through the reference engine's migrations (schema.py's
``MIGRATIONS``, never edited once shipped). Here a new file and a file migrated
from layout 1 are compared with one layout.sql wrote: every table and index as
SQLite keeps it (its normalised CREATE text: columns, types, constraints, index
terms, partial WHEREs) and ``user_version``. If this fails, a migration step and
layout.sql differ: change the layout in both, as a new step, and raise the version.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import alkstore_sqlite
import pytest
from alkstore_sqlite import SCHEMA_VERSION, open_store

from alkstore_contract import ManualClock

LAYOUT = Path(alkstore_sqlite.__file__).with_name("layout.sql")

Layout = tuple[int, list[tuple[str, str, str]]]

LAYOUT_1_INDEXES = (
    "CREATE INDEX jobs_lease ON jobs (queue, state, lease_expires_at)",
    "CREATE INDEX jobs_expiry ON jobs (queue, expires_at) WHERE expires_at IS NOT NULL",
)
"""The indexes layout 1 (alkstore_sqlite 0.1.0) had where layout 2 has its three sweep indexes; its table is today's
without layout 3's ``unique_key``."""


def write_layout_1(path: Path) -> None:
    """An empty file of layout 1, as alkstore_sqlite 0.1.0 wrote it: layout.sql with layout 1's indexes, no key."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(LAYOUT.read_text(encoding="utf-8"))
        for index in ("jobs_dead_purge", "jobs_live_expiry", "jobs_processing_lease", "jobs_unique_key"):
            conn.execute(f"DROP INDEX {index}")
        conn.execute("ALTER TABLE jobs DROP COLUMN unique_key")
        for statement in LAYOUT_1_INDEXES:
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
    finally:
        conn.close()


def layout_of(path: Path) -> Layout:
    """A file's ``user_version`` and each schema object as (type, name, its CREATE text with spaces collapsed)."""
    conn = sqlite3.connect(path)
    try:
        version: int = conn.execute("PRAGMA user_version").fetchone()[0]
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        return version, [(kind, name, re.sub(r"\s+", " ", sql).strip()) for kind, name, sql in rows]
    finally:
        conn.close()


def layout_file_written(tmp_path: Path) -> Layout:
    path = tmp_path / "by-layout.sql.sqlite3"
    conn = sqlite3.connect(path)
    try:
        conn.executescript(LAYOUT.read_text(encoding="utf-8"))
    finally:
        conn.close()
    return layout_of(path)


@pytest.mark.asyncio
async def test_a_new_store_file_is_laid_out_as_layout_sql_says(tmp_path: Path) -> None:
    """A file the reference engine creates has layout.sql's tables, indexes and version, and nothing else."""
    path = tmp_path / "jobs.sqlite3"
    store = await open_store(path, clock=ManualClock())
    await store.close()
    expected = layout_file_written(tmp_path)
    assert layout_of(path) == expected
    assert expected[0] == SCHEMA_VERSION, "layout.sql sets the version the reference engine writes"
    assert {name for kind, name, _ in expected[1] if kind == "index"} == {
        "jobs_claim",
        "jobs_dead_purge",
        "jobs_live_expiry",
        "jobs_processing_lease",
        "jobs_unique_key",
    }, "layout.sql was read: the indexes the sweep's and claim's statements are written for"


@pytest.mark.asyncio
async def test_a_layout_1_file_is_migrated_to_what_layout_sql_says(tmp_path: Path) -> None:
    """The migrations bring an old file to the very layout a new file gets."""
    path = tmp_path / "layout-1.sqlite3"
    write_layout_1(path)
    assert layout_of(path)[0] == 1
    store = await open_store(path, clock=ManualClock())
    await store.close()
    assert layout_of(path) == layout_file_written(tmp_path)
