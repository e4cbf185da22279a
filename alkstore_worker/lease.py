"""A claim's lease as the worker's own clock sees it, and the guard that stops a handler the moment it is lost.

The store fences every handle op by the claim's token and lease (contract H1),
so a run whose lease lapsed can no longer settle its job. But the handler's
own side effects (an email, an HTTP call, a row in another database) are not
fenced: after a lapse another worker may already run the same job, and a
stale handler that goes on overlaps it. So the worker keeps each lease by
``time.monotonic()``: the deadline starts at the instant the claim was sent
plus the job's visibility timeout (the server's lease can only end later), and
each successful heartbeat moves it to the instant that heartbeat was sent plus
the lease it asked for. The handler runs inside ``guarded``: before each step
of its coroutine (every resumption after an ``await``), the deadline is read;
once it has passed, ``CancelledError`` is thrown into the handler instead of
the value it awaited. A process stopped (SIGSTOP, a VM paused) past its lease
therefore cancels the handler on its first step after the resume, whatever
order the event loop runs its due callbacks in; a handler blocked on an
``await`` that never returns is cancelled by the heartbeat task's timer at the
deadline.

What no runtime can prevent: what the handler did before the stop, and the
synchronous code of the step that was running when the deadline passed.
"""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Generator
from typing import Any, TypeVar

T = TypeVar("T")

LEASE_LOST = "lease lost"
"""The reason of a cancellation because the lease's local deadline passed without a renewal."""
HEARTBEAT_REFUSED = "heartbeat refused"
"""The reason of a cancellation because a heartbeat returned False: the store says another claim may hold the job."""


class Lease:
    """One claim's lease by this process's monotonic clock: when it ends, and whether it was lost (and why)."""

    __slots__ = ("deadline", "lost")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        """``time.monotonic()`` at which the lease ends unless a heartbeat renews it."""
        self.lost: str | None = None
        """Why the lease was given up (``LEASE_LOST``, ``HEARTBEAT_REFUSED``), ``None`` while held."""

    def renewed(self, sent_at: float, lease_s: float) -> None:
        """A heartbeat sent at ``sent_at`` (monotonic) succeeded: the store's lease now ends no earlier than this."""
        if self.lost is None:
            self.deadline = sent_at + lease_s

    def still_holding(self) -> bool:
        """Whether the claim's lease still runs by the local clock; marks it lost once the deadline passed."""
        if self.lost is not None:
            return False
        if time.monotonic() >= self.deadline:
            self.lost = LEASE_LOST
            return False
        return True

    def lose(self, reason: str) -> None:
        """Give the lease up for ``reason``; the first reason stands."""
        if self.lost is None:
            self.lost = reason


@types.coroutine
def _stepwise(awaitable: Awaitable[T], lease: Lease) -> Generator[Any, Any, T]:
    """Drive ``awaitable`` one step at a time, throwing ``CancelledError`` into it once ``lease`` is not held."""
    steps = awaitable.__await__()
    send: Any = None
    throw: BaseException | None = None
    while True:
        if throw is None and not lease.still_holding():
            throw = asyncio.CancelledError(f"alkstore worker: {lease.lost}")
        try:
            waited = steps.send(send) if throw is None else steps.throw(throw)
        except StopIteration as finished:
            return finished.value  # type: ignore[no-any-return]
        send, throw = None, None
        try:
            send = yield waited
        except BaseException as raised:  # every exception the task is handed goes on into the handler
            throw = raised


async def guarded(awaitable: Awaitable[T], lease: Lease) -> T:
    """Await ``awaitable`` (a handler's coroutine), never letting it run a step after ``lease`` is lost (see the
    module's docstring)."""
    return await _stepwise(awaitable, lease)
