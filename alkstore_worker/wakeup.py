"""How an idle worker learns a job arrived: polling with a short backoff, or Postgres LISTEN/NOTIFY.

Every queue loop of a worker waits on its own ``asyncio.Event`` from the
waker, with a timeout that is the loop's current poll interval: polling is
always there as the fallback, and a notification only cuts the wait short.
``PollWaker`` never sets the events (SQLite, mem, any engine). ``PgNotifyWaker``
holds one LISTEN connection and sets every event on each notification; when
the connection breaks (a cut, a server restart) it sets them too (a job may
have arrived while it was deaf), then reconnects with a backoff, so a cut
costs at most the poll interval, never a stuck worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from alkstore_worker.events import emit


class Waker(Protocol):
    """Sets the events it handed out when jobs may have arrived."""

    def subscribe(self) -> asyncio.Event:
        """A new event this waker sets on every wake-up."""
        ...

    async def start(self) -> None:
        """Begin listening (may do I/O; never raises for an unreachable server: it retries)."""
        ...

    async def close(self) -> None:
        """Stop listening and release what it holds."""
        ...


class PollWaker:
    """No push: the loops poll. For engines with no notification channel (SQLite, mem, a third party's)."""

    def __init__(self) -> None:
        self._events: list[asyncio.Event] = []

    def subscribe(self) -> asyncio.Event:
        event = asyncio.Event()
        self._events.append(event)
        return event

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None


class PgNotifyWaker:
    """LISTEN on a channel over its own asyncpg connection; reconnects after any cut.

    ``check_interval_s`` is how often an idle connection is probed with a
    ``SELECT 1`` (a silently dead TCP connection delivers no notification and
    no error, so only a probe finds it); ``connect_timeout_s`` bounds each
    connect and probe.
    """

    def __init__(
        self,
        dsn: str,
        channel: str,
        *,
        check_interval_s: float = 1.0,
        connect_timeout_s: float = 2.0,
        max_backoff_s: float = 2.0,
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._check_interval_s = check_interval_s
        self._connect_timeout_s = connect_timeout_s
        self._max_backoff_s = max_backoff_s
        self._events: list[asyncio.Event] = []
        self._task: asyncio.Task[None] | None = None
        self.connects = 0
        """How many times a LISTEN connection was established (more than 1 means it reconnected)."""
        self.notifications = 0
        self.listening = asyncio.Event()
        """Set while a LISTEN connection is up."""

    def subscribe(self) -> asyncio.Event:
        event = asyncio.Event()
        self._events.append(event)
        return event

    def _wake(self, *_args: object) -> None:
        for event in self._events:
            event.set()

    def _notified(self, *_args: object) -> None:
        self.notifications += 1
        self._wake()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen_forever(), name="alkstore-worker-listen")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _listen_forever(self) -> None:
        import asyncpg

        backoff = 0.05
        while True:
            connection: Any = None
            try:
                connection = await asyncpg.connect(self._dsn, timeout=self._connect_timeout_s)
                await connection.add_listener(self._channel, self._notified)
                self.connects += 1
                self.listening.set()
                if self.connects > 1:
                    emit("listen_reconnected", connects=self.connects)
                self._wake()
                backoff = 0.05
                while True:
                    await asyncio.sleep(self._check_interval_s)
                    await asyncio.wait_for(connection.execute("SELECT 1"), self._connect_timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure of the listen connection: fall back to polling, reconnect
                if self.listening.is_set():
                    emit("listen_lost", logging.WARNING, error=repr(exc))
                self.listening.clear()
                self._wake()
            finally:
                if connection is not None:
                    connection.terminate()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._max_backoff_s)
