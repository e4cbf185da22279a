"""The statement timeout of one store (contract N1), kept by one timer for all its statements instead of one each.

asyncpg bounds a statement by its ``command_timeout`` with a timer of its own:
a ``call_later`` when the statement starts and a ``cancel`` when it ends, each
a handful of Python calls in asyncio's event loop (a ``TimerHandle``, a heap
push, the cancelled-timer bookkeeping), plus four clock reads in asyncpg.
Counted with cachegrind (``benchmarks/pg_instructions.py``), that is some
20,000 client instructions a statement, a sixth of what the bare driver
spends on a ``claim_one`` + ``ack``. A store's statements all share one
timeout, so a statement only needs to be noted when it starts and forgotten
when it ends (a dict entry), and one timer, ticking every ``1 / TICKS`` of
the timeout while any statement runs, finds the ones that ran too long.

A statement found running for at least ``(1 - 1 / TICKS)`` of the timeout is
cancelled: its task is cancelled, as ``asyncio.timeout`` does, and asyncpg
answers the cancelled wait exactly as it answers its own timeout, with a
cancel request to the server (the connection then goes back to the pool,
which waits for that cancel or terminates the connection). The statement
raises ``TimeoutError`` in its task, and a cancellation that came from
elsewhere stays a cancellation. So a statement gives up after between 0.9 and
1 times ``op_timeout_s``, never later (the bound the adapter reports, N1,
holds as before) and never much earlier.
"""

from __future__ import annotations

import asyncio
from time import monotonic

TICKS = 10
"""Checks per timeout: a statement gives up after between ``1 - 1 / TICKS`` and 1 times the timeout."""


class StatementDeadlines:
    """One store's statements in flight, each cancelled once it has run for (about) ``timeout_s``.

    ``started`` before a statement; ``ended`` after it returned, or
    ``failed`` with what it raised, which turns this watchdog's cancellation
    into ``TimeoutError``.
    """

    __slots__ = ("_cancelled", "_late_s", "_running", "_tick_s", "_timer")

    def __init__(self, timeout_s: float) -> None:
        self._tick_s = timeout_s / TICKS
        self._late_s = timeout_s - self._tick_s
        """A statement running this long is cancelled at the next tick, which is at most a tick away."""
        self._running: dict[asyncio.Task[object], float] = {}
        """Each task with a statement in flight, and when the statement started (``time.monotonic``)."""
        self._cancelled: dict[asyncio.Task[object], int] = {}
        """The tasks this watchdog cancelled, each with how many cancellations it had pending before."""
        self._timer: asyncio.TimerHandle | None = None

    def started(self) -> asyncio.Task[object]:
        """Note that the current task starts a statement now; returns the task, for ``ended`` or ``failed``."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a store's statements run in an asyncio task")
        self._running[task] = monotonic()
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._tick_s, self._tick)
        return task

    def ended(self, task: asyncio.Task[object]) -> None:
        """The statement of ``task`` returned."""
        del self._running[task]
        if self._cancelled:
            self._cancelled.pop(task, None)

    def failed(self, task: asyncio.Task[object], exc: BaseException) -> BaseException:
        """The statement of ``task`` raised ``exc``: what to raise instead, ``TimeoutError`` if it was cancelled here.

        The watchdog's cancellation is taken back (``Task.uncancel``); a
        cancellation from elsewhere that came meanwhile stands, and ``exc``
        is raised as it is.
        """
        del self._running[task]
        pending = self._cancelled.pop(task, None)
        if pending is None or task.uncancel() > pending or not isinstance(exc, asyncio.CancelledError):
            return exc
        return TimeoutError(f"the statement ran for its timeout of {self._late_s + self._tick_s:g} s")

    def _tick(self) -> None:
        self._timer = None
        late = monotonic() - self._late_s
        for task, started in self._running.items():
            if started <= late and task not in self._cancelled:
                self._cancelled[task] = task.cancelling()
                task.cancel()
        if self._running:
            self._timer = asyncio.get_running_loop().call_later(self._tick_s, self._tick)
