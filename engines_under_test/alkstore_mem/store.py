"""A store of the in-memory engine: one open view on a named space (contract S1–S3, P1)."""

from __future__ import annotations

import random
from types import TracebackType
from typing import Self

from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.handles import raise_if_closed
from alkstore_contract.types import QueueOpts, validate_queue_opts
from alkstore_contract.validation import validate_queue_name
from alkstore_mem.queue import MemQueue
from alkstore_mem.space import MemSpace, space_named


class MemStore:
    """An open store on one space.

    The store owns what is per-connection in the other engines: its clock (read
    once per op, T1/T2), its random source for backoff jitter (seeded, decision
    15) and its closed flag. The jobs belong to the space, so every store on the
    same space sees the same jobs (P1). Closing a store only closes that store.
    """

    queue_class: type[MemQueue] = MemQueue

    def __init__(self, space: MemSpace, *, clock: Clock | None = None, seed: int | None = None) -> None:
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidArgument(f"clock={clock!r}: must have a now() method returning an aware datetime")
        self._space = space
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._rng = random.Random(seed)
        self._closed = False

    @property
    def space(self) -> MemSpace:
        """The shared state this store works on."""
        return self._space

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def rng(self) -> random.Random:
        """The source of backoff jitter (contract R5), seeded by ``open_store(seed=...)``."""
        return self._rng

    @property
    def closed(self) -> bool:
        return self._closed

    def queue(self, name: str, opts: QueueOpts | None = None) -> MemQueue:
        """A handle on queue ``name`` stamping ``opts`` (default ``QueueOpts()``) on what it enqueues (S1, E1)."""
        raise_if_closed(self._closed, "queue()")
        validate_queue_name(name)
        return self.queue_class(self, name, validate_queue_opts(opts))

    async def close(self) -> None:
        """Close this store (idempotent); the space and other stores on it are untouched (S3)."""
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def open_store(space: str = "default", *, clock: Clock | None = None, seed: int | None = None) -> MemStore:
    """Open a store on the in-memory space named ``space``, creating the space if it does not exist yet.

    ``clock`` defaults to the host's wall clock; pass a ``ManualClock`` to move
    time by hand. ``seed`` seeds the backoff jitter. It is a coroutine only for
    symmetry with the engines that do I/O when they open.
    """
    return MemStore(space_named(space), clock=clock, seed=seed)
