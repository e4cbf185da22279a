"""The oracle's connections: one bare connection per server and event loop, kept while the loop runs.

The suite asks the adapter for its own count of a location's jobs (``count_stored_jobs``, read
without the engine's code) after every program of ``model_based`` and in many legs. A connection
opened for each count cost the server a backend's start and exit every time: 591 of the 596
sessions one ``model_based`` run opened on Postgres. Each count still goes over a bare asyncpg
connection that no engine class touches; only the connection is kept.

An asyncpg connection belongs to the event loop that opened it, so one is kept per loop and per
server, behind a lock (two tasks of one loop may count at once), and an async generator holds it:
the loop's ``shutdown_asyncgens`` (``asyncio.run`` and ``asyncio.Runner`` call it) closes it
when the loop ends. A count whose connection broke under it (the server crashed and restarted
since: the crash legs) opens a fresh one and counts again: a read, so counting twice changes
nothing. Errors of the count itself (a dropped schema, a server that does not answer) are raised
as before.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


async def _holder(connection: Any) -> AsyncGenerator[None, None]:
    """Suspended for the connection's life; the loop's ``shutdown_asyncgens`` closes it (``terminate``: no
    round trip, so a connection to a server that is gone closes at once too)."""
    try:
        yield
    finally:
        connection.terminate()


@dataclass
class _Held:
    connection: Any
    holder: AsyncGenerator[None, None]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class OracleConnections:
    """The adapter's bare connections for the oracle, one per (event loop, DSN)."""

    def __init__(self, connect: Callable[[str], Awaitable[Any]]) -> None:
        self._connect = connect
        self._held: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Held]] = weakref.WeakKeyDictionary()

    async def fetchval(self, dsn: str, query: str) -> Any:
        """``query``'s value over this loop's connection to ``dsn``, opened when there is none or it broke."""
        import asyncpg  # the adapter imports this module with or without asyncpg installed; a count needs it

        # What a statement on a connection the server or the network closed raises: then the count is made again.
        broken = (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.InterfaceError, OSError)
        held = self._held.setdefault(asyncio.get_running_loop(), {})
        entry = held.get(dsn) or await self._open(held, dsn, None)
        try:
            return await self._fetchval(entry, query)
        except broken:
            return await self._fetchval(await self._open(held, dsn, entry), query)

    @staticmethod
    async def _fetchval(entry: _Held, query: str) -> Any:
        async with entry.lock:
            return await entry.connection.fetchval(query)

    async def _open(self, held: dict[str, _Held], dsn: str, broken: _Held | None) -> _Held:
        """A connection to ``dsn`` kept for this loop, in place of ``broken`` (unless another count replaced it)."""
        current = held.get(dsn)
        if current is not None and current is not broken:
            return current
        if broken is not None:
            del held[dsn]
            await broken.holder.aclose()
        connection = await self._connect(dsn)
        holder = _holder(connection)
        await anext(holder)
        held[dsn] = entry = _Held(connection, holder)
        return entry
