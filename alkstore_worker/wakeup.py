"""How an idle worker learns a job arrived: polling with a short backoff, or the engine's own notifications.

Every queue loop of a worker waits on its own ``asyncio.Event`` from the
waker, with a timeout that is the loop's current poll interval: polling is
always there as the fallback, and a notification only cuts the wait short.
``PollWaker`` never sets the events (SQLite, mem, any engine without a
channel). An engine with a channel brings its own ``Waker`` through its source
(``alkstore_postgres.PostgresSource``: LISTEN/NOTIFY), which this module never
imports.
"""

from __future__ import annotations

import asyncio
from typing import Protocol


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
