"""Periodic ``sweep_expired``, run by one worker at a time.

Concurrent sweeps are safe (contract X3: each job moves once), so the lock
only saves the work of N workers sweeping the same rows at once: a worker
that does not get it skips this round. An engine brings its lock through its
source (Postgres: a session advisory lock; SQLite: a ``flock`` on a file
beside the database); without one, ``NoLock``: every worker sweeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Protocol


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
