"""Keeping one task's transaction apart from other tasks' statements on a shared connection.

A store owns ONE aiosqlite connection, and several asyncio tasks may use the
store at once. aiosqlite runs every call on the connection's own thread in
submission order, so two single statements from two tasks never mix: each is
atomic by itself in autocommit mode and may be in flight together (they
pipeline through the thread). A multi-statement transaction is different: it
spans several calls (``BEGIN IMMEDIATE`` … ``COMMIT``), and a statement another
task submitted in between would run inside it — its write committed or rolled
back with someone else's transaction, its read seeing uncommitted rows.

``StatementGate`` is therefore a readers–writer gate: single statements enter
*shared*, transactions enter *exclusive*. A transaction starts only once every
shared holder has finished, and no single statement starts while a transaction
holds the gate. Waiters are served first come, first served, so a steady stream
of single statements cannot starve a transaction (nor the reverse).

All bookkeeping is synchronous (no ``await`` on a release path), so a task
cancelled at any point never leaves the gate held.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from types import TracebackType


@dataclass(eq=False)
class _Waiter:
    exclusive: bool
    granted: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class _Hold:
    """``async with`` on the gate, shared or exclusive.

    A plain class rather than ``@asynccontextmanager``: every single statement
    passes through here, and an async generator costs a few microseconds more
    each time (the event loop registers every new one in a weak set).
    """

    __slots__ = ("_exclusive", "_gate")

    def __init__(self, gate: StatementGate, *, exclusive: bool) -> None:
        self._gate = gate
        self._exclusive = exclusive

    async def __aenter__(self) -> None:
        await self._gate._acquire(exclusive=self._exclusive)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._gate._release(exclusive=self._exclusive)


class StatementGate:
    """A FIFO readers–writer gate: ``shared()`` for single statements, ``exclusive()`` for transactions."""

    def __init__(self) -> None:
        self._shared_holders = 0
        self._exclusive_held = False
        self._waiters: deque[_Waiter] = deque()
        self._shared = _Hold(self, exclusive=False)
        self._exclusive = _Hold(self, exclusive=True)

    def shared(self) -> _Hold:
        """Hold the gate alongside other single statements, never alongside a transaction (``async with``)."""
        return self._shared

    def exclusive(self) -> _Hold:
        """Hold the gate alone: no other statement runs on the connection until this exits (``async with``)."""
        return self._exclusive

    def _release(self, *, exclusive: bool) -> None:
        if exclusive:
            self._exclusive_held = False
        else:
            self._shared_holders -= 1
        self._wake()

    def _can_enter(self, exclusive: bool) -> bool:
        if exclusive:
            return not self._exclusive_held and self._shared_holders == 0
        return not self._exclusive_held

    def _enter(self, exclusive: bool) -> None:
        if exclusive:
            self._exclusive_held = True
        else:
            self._shared_holders += 1

    async def _acquire(self, *, exclusive: bool) -> None:
        if not self._waiters and self._can_enter(exclusive):
            self._enter(exclusive)
            return
        waiter = _Waiter(exclusive)
        self._waiters.append(waiter)
        self._wake()  # the line may hold only cancelled waiters, in which case this grants at once
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter.granted.done() and not waiter.granted.cancelled():
                # Granted, then cancelled before resuming: hand the grant back.
                if exclusive:
                    self._exclusive_held = False
                else:
                    self._shared_holders -= 1
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            self._wake()
            raise

    def _wake(self) -> None:
        """Grant the gate to waiters at the head of the line, as far as the rules allow."""
        while self._waiters:
            head = self._waiters[0]
            if head.granted.done():
                # Its task was cancelled while waiting; it cleans up after itself.
                self._waiters.popleft()
                continue
            if not self._can_enter(head.exclusive):
                return
            self._waiters.popleft()
            self._enter(head.exclusive)
            head.granted.set_result(None)
