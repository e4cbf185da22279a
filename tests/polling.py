"""Waiting in a test for something another task, process or server does in its own time.

A poll is bounded by a deadline, never by a count of tries: a count is a time only on a quiet machine, and the test
command runs five pytest processes on two cores (a poll of 100 tries of 0.05 s once ran out under load average 7).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 30.0
"""How long a poll waits by default: far past what it waits for on a quiet machine, short of a hung run."""


async def until(condition: Callable[[], Awaitable[T]], what: str, timeout_s: float = WAIT_S) -> T:
    """Await ``condition()`` every 10 ms until its value is true, and return that value; fail naming ``what``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not (value := await condition()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for: {what}")
        await asyncio.sleep(0.01)
    return value
