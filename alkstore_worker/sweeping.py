"""Periodic ``sweep_expired``, run by one worker at a time.

Concurrent sweeps are safe (contract X3: each job moves once), so the lock
only saves the work of N workers sweeping the same rows at once: a worker
that does not get it skips this round. Postgres: a session advisory lock
taken with ``pg_try_advisory_lock`` on a connection of the sweeper's own;
SQLite: an exclusive non-blocking ``flock`` on a file beside the database
(released by the OS if the worker dies); mem (one process): no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol


class SweepLock(Protocol):
    """Whether this worker sweeps this round."""

    def held(self) -> contextlib.AbstractAsyncContextManager[bool]:
        """Yields True when this worker holds the lock for the round, False when another does."""
        ...

    async def close(self) -> None:
        """Release what the lock holds."""
        ...


class NoLock:
    """Every worker sweeps (one process, or an engine with nothing to lock on)."""

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        yield True

    async def close(self) -> None:
        return None


class FileLock:
    """``flock`` on ``path``: one holder across processes on this host; the OS drops it with the process."""

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


class PgAdvisoryLock:
    """A session advisory lock per schema, taken and released around each sweep on one connection."""

    def __init__(self, dsn: str, schema: str, *, timeout_s: float = 5.0) -> None:
        self._dsn = dsn
        self._key = int.from_bytes(hashlib.sha256(b"sweep:" + schema.encode("utf-8")).digest()[:8], "big", signed=True)
        self._timeout_s = timeout_s
        self._connection: Any = None

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        import asyncpg

        try:
            if self._connection is None or self._connection.is_closed():
                self._connection = await asyncpg.connect(self._dsn, timeout=self._timeout_s)
            got = await self._connection.fetchval("SELECT pg_try_advisory_lock($1)", self._key, timeout=self._timeout_s)
        except (OSError, asyncpg.PostgresError, TimeoutError):
            await self.close()
            yield False
            return
        if not got:
            yield False
            return
        try:
            yield True
        finally:
            try:
                await self._connection.execute("SELECT pg_advisory_unlock($1)", self._key, timeout=self._timeout_s)
            except (OSError, asyncpg.PostgresError, TimeoutError):
                await self.close()

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.terminate()
            self._connection = None
