"""The SQLite engine's adapter for the conformance suite (see ``alkstore_contract.adapter``).

A location is the path of a database file inside a directory of its own, made
fresh per ``create_location`` call, so parallel test workers never share one.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import ClassVar

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store
from alkstore_sqlite.driver import SqliteDriver
from alkstore_sqlite.schema import BUSY_TIMEOUT_MS
from alkstore_sqlite.store import SqliteStore

LOCATION_DIR_PREFIX = "alkstore-sqlite-"
LOCATION_FILE_NAME = "jobs.sqlite3"
MIN_SQLITE_VERSION = (3, 35, 0)
"""``UPDATE … RETURNING`` arrived in SQLite 3.35."""


def _count_jobs(path: Path) -> int:
    """The oracle's read: plain stdlib sqlite3, read-only, none of the engine's code."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        has_table = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'jobs'")
        if has_table.fetchone()[0] == 0:
            return 0
        count: int = conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
        return count
    finally:
        conn.close()


def _missing_feature() -> str | None:
    if sqlite3.sqlite_version_info < MIN_SQLITE_VERSION:
        wanted = ".".join(map(str, MIN_SQLITE_VERSION))
        return f"the linked SQLite is {sqlite3.sqlite_version}; alkstore_sqlite needs {wanted} or newer (RETURNING)"
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("SELECT count(*) FROM json_each('[]')")
    except sqlite3.OperationalError:
        return f"the linked SQLite {sqlite3.sqlite_version} was built without JSON functions (json_each)"
    finally:
        conn.close()
    return None


class SqliteAdapter:
    """Who the SQLite engine is, what it can do, and how the suite gets a fresh file for it."""

    driver_class: ClassVar[type[SqliteDriver]] = SqliteDriver
    """The storage the stores run on (the project's broken-engine mutants put a subclass here)."""
    store_class: ClassVar[type[SqliteStore]] = SqliteStore
    """The kit's store over it (a mutant whose fault no driver can reach puts a subclass here)."""

    name = "sqlite"
    capabilities = frozenset(
        {
            Capability.INJECTABLE_CLOCK,
            Capability.SHARED_LOCATION,
            Capability.MULTI_PROCESS,
            Capability.DURABLE,
            Capability.RELEASE,
            Capability.UNIQUE_KEYS,
        }
    )

    @property
    def version(self) -> str:
        return version("alkstore")

    async def unavailable_reason(self) -> str | None:
        """``None`` unless the linked SQLite lacks ``RETURNING`` or the JSON functions."""
        return _missing_feature()

    async def storage_version(self) -> str:
        """For the report: the SQLite library the ``sqlite3`` module (so aiosqlite) runs on."""
        return f"SQLite {sqlite3.sqlite_version}"

    async def create_location(self) -> str:
        """A file path in a fresh temporary directory; the file itself is created on first open."""
        directory = await asyncio.to_thread(tempfile.mkdtemp, prefix=LOCATION_DIR_PREFIX)
        return str(Path(directory) / LOCATION_FILE_NAME)

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        return await self.store_class.open(location, clock=clock, seed=seed, driver_class=self.driver_class)

    async def count_stored_jobs(self, location: str) -> int:
        return await asyncio.to_thread(_count_jobs, Path(location))

    async def drop_location(self, location: str) -> None:
        """Remove the directory ``create_location`` made (the file with its -wal and -shm)."""
        directory = Path(location).parent
        if directory.name.startswith(LOCATION_DIR_PREFIX):
            await asyncio.to_thread(shutil.rmtree, directory, True)


adapter = SqliteAdapter()
