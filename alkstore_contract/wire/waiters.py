"""Who waits for an engine's reply, and how a reply read in one thread reaches a waiter in another.

Part of the wire.

An engine process serves several event loops (each row's, the model-based row's in a thread) and
synchronous callers, and whichever of them reads a reply resolves it: at once when the waiter is
its own loop's or its own thread's, through ``call_soon_threadsafe`` when it is another loop's,
and with a byte on the waiter's ``Wake`` pipe when it is a synchronous caller asleep in ``select``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any


class Wake:
    """A pipe a synchronous caller sleeps on beside the engine's: a byte in it means "your reply was read".

    ``ring`` after ``close`` does nothing, so a late ring can never write into a descriptor reused since.
    """

    def __init__(self) -> None:
        self.fd, self._ring = os.pipe()
        self._lock = threading.Lock()
        self._closed = False

    def ring(self) -> None:
        with self._lock:
            if not self._closed:
                os.write(self._ring, b"!")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            os.close(self.fd)
            os.close(self._ring)


@dataclass(slots=True)
class Waiter:
    """Who waits for one request's reply: an ``asyncio`` future on ``loop``, or a synchronous caller.

    A synchronous caller sleeps in ``select`` on the engine's pipes and on ``wake``; whoever else reads
    its reply (a loop in another thread) rings ``wake`` before resolving ``future``, so the caller never
    sleeps past its answer.
    """

    op: str
    future: asyncio.Future[Any] | concurrent.futures.Future[Any]
    loop: asyncio.AbstractEventLoop | None = None
    wake: Wake | None = None

    def settle(self, result: Any, error: BaseException | None, here: asyncio.AbstractEventLoop | None) -> None:
        """Resolve the future from whichever thread read the reply (``here``: that thread's running loop)."""
        if self.loop is None:
            if self.wake is not None:
                self.wake.ring()
            resolve(self.future, result, error)
        elif self.loop is here:
            resolve(self.future, result, error)
        else:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
                self.loop.call_soon_threadsafe(resolve, self.future, result, error)


def resolve(
    future: asyncio.Future[Any] | concurrent.futures.Future[Any], result: Any, error: BaseException | None
) -> None:
    """Set the outcome unless the future has one: a reply can race its op's timer, a cancel and ``end``."""
    if future.done():  # cancelled (a timeout, a cancelled row), or already failed by ``end``
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any: whose futures a reader here may resolve directly."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
