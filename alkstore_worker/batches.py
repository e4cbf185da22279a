"""Acks and heartbeats of one queue's runs, sent to the store together: one round trip for many jobs.

A worker running ten no-op jobs at once used to spend ten round trips acking
them, and a hundred long jobs a heartbeat statement each. An engine whose
queue offers ``ack_handles`` and ``heartbeat_handles`` (every engine on the
kit: one statement each on Postgres, one shared transaction on SQLite) takes
them at once, each still fenced by its own claim (contract H1). A run's
request waits in its ``Batch`` until every run of the queue that may send one
soon is waiting too (a drain: nothing else will come sooner; for acks, runs
claimed ahead and not started are not counted), or ``window_s`` passes,
whichever is first; ``flush`` sends what waits at once (a stop calls it).

Nothing is reported done before the store said so: a run awaits its own
answer from the statement that carried its ack (its slot is already free for
the next job meanwhile). A crash before the flush
leaves the job claimed, so it runs again after its lease: a re-run, never a
loss. A batch that raises ``StoreUnavailable`` leaves every handle in it
unspent (N6); each run repeats its own ack, which joins the next batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from alkstore_contract.surface import JobHandle

ForHandles = Callable[[Sequence[JobHandle]], Awaitable[list[bool]]]
"""A queue's ``ack_handles`` or ``heartbeat_handles``: one op for each handle, fenced by its own claim, in one step."""


class Batch:
    """One op's requests of one queue's runs, waiting to be sent together."""

    def __init__(self, for_handles: ForHandles, window_s: float, in_flight: Callable[[], int]) -> None:
        self._for_handles = for_handles
        self._window_s = window_s
        self._in_flight = in_flight
        """How many runs of the queue are in flight now (the buffer is sent once they all wait in it)."""
        self._waiting: list[tuple[JobHandle, asyncio.Future[bool]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._sending: set[asyncio.Task[None]] = set()

    async def send(self, handle: JobHandle) -> bool:
        """The op on ``handle``, sent with the others waiting: the store's answer for this handle."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((handle, answer))
        if len(self._waiting) >= self._in_flight():
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._window_s, self.flush)
        return await answer

    def flush(self) -> None:
        """Send every request waiting now, in one call; one whose run stopped waiting (its heartbeat task was
        cancelled when the handler finished) is dropped, so a spent handle never fails the others' batch."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch = [(handle, answer) for handle, answer in self._waiting if not answer.done()]
        self._waiting = []
        if not batch:
            return
        sending = asyncio.get_running_loop().create_task(self._send(batch))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)

    async def drain(self) -> None:
        """Send what waits and wait for every batch in flight to be answered."""
        self.flush()
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    async def _send(self, batch: list[tuple[JobHandle, asyncio.Future[bool]]]) -> None:
        try:
            accepted = await self._for_handles([handle for handle, _ in batch])
        except Exception as exc:
            for _, answer in batch:
                if not answer.done():
                    answer.set_exception(exc)
            return
        for (_, answer), ok in zip(batch, accepted, strict=True):
            if not answer.done():
                answer.set_result(ok)
