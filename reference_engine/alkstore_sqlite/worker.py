"""The SQLite engine's side of ``alkstore worker``: a store per worker, a file lock for the sweep, and the dead
letters listed read-only.

The worker runtime (``alkstore_worker``) asks a source what it supports and never imports an engine: this class
has the shape of ``alkstore_worker.sources.WorkerSource`` and of its optional parts (``TakesTurns``,
``ListsDeadJobs``, ``NamesItsErrors``), and imports nothing of the worker. SQLite has no notification channel,
so its workers poll (``poll_max_s``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

from alkstore_contract.errors import AlkstoreError
from alkstore_contract.surface import Store
from alkstore_contract.types import Job
from alkstore_sqlite.columns import JOB_COLUMN_LIST, decode_job


class SqliteSource:
    """An SQLite file: polling, a file lock beside the database for the sweep."""

    poll_max_s = 0.2
    """The longest an idle queue loop waits between claims."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.description = f"sqlite:{self.path}"

    async def open(self) -> Store:
        """A new store on the file; the caller closes it."""
        from alkstore_sqlite.store import open_store

        return await open_store(self.path)

    def sweep_lock(self) -> FileLock:
        return FileLock(self.path.with_name(self.path.name + ".sweep-lock"))

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        return (OSError, TimeoutError, AlkstoreError, sqlite3.Error)

    async def dead_jobs(self, queue: str | None, limit: int) -> list[Job]:
        """Dead letters, newest first, read on a read-only connection of their own."""
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        with sqlite3.connect(uri, uri=True) as connection:
            rows = connection.execute(
                f"SELECT {JOB_COLUMN_LIST} FROM jobs WHERE state = 'dead'"
                " AND (?1 IS NULL OR queue = ?1) ORDER BY died_at DESC, id DESC LIMIT ?2",
                (queue, limit),
            ).fetchall()
        return [decode_job(row) for row in rows]


class FileLock:
    """``flock`` on ``path``: one holder across processes on this host; the OS drops it with the process (a
    ``SweepLock`` of the worker)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    async def close(self) -> None:
        return None
