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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass(eq=False)
class _Waiter:
    exclusive: bool
    granted: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class StatementGate:
    """A FIFO readers–writer gate: ``shared()`` for single statements, ``exclusive()`` for transactions."""

    def __init__(self) -> None:
        self._shared_holders = 0
        self._exclusive_held = False
        self._waiters: deque[_Waiter] = deque()

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        """Hold the gate alongside other single statements, never alongside a transaction."""
        await self._acquire(exclusive=False)
        try:
            yield
        finally:
            self._shared_holders -= 1
            self._wake()

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the gate alone: no other statement runs on the connection until this exits."""
        await self._acquire(exclusive=True)
        try:
            yield
        finally:
            self._exclusive_held = False
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
