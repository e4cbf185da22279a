"""The store: an open alkstore SQLite file (the kit's store over a ``SqliteDriver``), and ``open_store`` to get one."""

from __future__ import annotations

import os
from typing import Self

from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.kit import KitStore
from alkstore_sqlite.driver import SqliteDriver
from alkstore_sqlite.schema import DEFAULT_SYNCHRONOUS, Synchronous, validate_synchronous


class SqliteStore(KitStore[SqliteDriver]):
    """An open alkstore SQLite file.

    Any number of stores, in any number of processes, may share one file: every
    claim and every handle op is one atomic statement under SQLite's write lock,
    so a job is never handed out twice (C4, P1, P2). Committed writes survive a
    close, or a crash or ``kill -9`` of the process (WAL with
    ``synchronous=NORMAL``); a power loss may lose the last commits (P3),
    unless the store was opened with ``synchronous="FULL"``.

    A store keeps one connection; several asyncio tasks may share it. Use it as
    ``async with await open_store(path) as store:``, or call ``close()``.
    """

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        seed: int | None = None,
        synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
        driver_class: type[SqliteDriver] = SqliteDriver,
    ) -> Self:
        """Open (creating if needed) the file at ``path`` on a ``driver_class``; see ``open_store``.

        The store is made only once the file is open, so a clock the kit
        refuses closes the connection again before the error goes out.
        """
        driver = await driver_class.open(path, synchronous=validate_synchronous(synchronous))
        try:
            return cls(driver, clock=clock if clock is not None else SystemClock(), seed=seed)
        except BaseException:
            await driver.close()
            raise

    @property
    def location(self) -> str:
        """The file this store is open on."""
        return self.driver.location


async def open_store(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    seed: int | None = None,
    synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
) -> SqliteStore:
    """Open the alkstore SQLite file at ``path``, creating it and its layout when missing.

    ``clock`` is where every op reads ``now`` (default: the host's ``SystemClock``);
    ``seed`` seeds the store's random source for backoff jitter, so a run can be
    replayed. ``synchronous`` is SQLite's ``PRAGMA synchronous`` for this store's
    connection: ``"NORMAL"`` (default) keeps every commit through a crash or
    ``kill -9`` of the process (P3); ``"FULL"`` flushes each commit to disk, so it
    also survives a power loss or OS crash, and writes are slower. Anything else
    is ``InvalidArgument``, raised before the file is touched. Needs SQLite 3.35
    or newer (``RETURNING``) with JSON functions.
    """
    return await SqliteStore.open(path, clock=clock, seed=seed, synchronous=synchronous)
