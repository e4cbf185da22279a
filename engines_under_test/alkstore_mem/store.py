"""A store of the in-memory engine: the kit's store over a ``MemDriver`` on a named space (contract S1–S3, P1)."""

from __future__ import annotations

from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.kit import KitStore
from alkstore_mem.driver import MemDriver
from alkstore_mem.space import space_named


class MemStore(KitStore[MemDriver]):
    """An open store on one space.

    The store owns what is per-connection in the other engines: its clock (read
    once per op, T1/T2), its random source for backoff jitter (seeded, R5) and
    its closed flag. The jobs belong to the space, so every store on the same
    space sees the same jobs (P1). Closing a store only closes that store.
    """


async def open_store(
    space: str = "default",
    *,
    clock: Clock | None = None,
    seed: int | None = None,
) -> MemStore:
    """Open a store on the in-memory space named ``space``, creating the space if it does not exist yet.

    ``clock`` defaults to the host's wall clock; pass a ``ManualClock`` to move
    time by hand. ``seed`` seeds the backoff jitter. It is a coroutine only
    for symmetry with the engines that do I/O when they open.
    """
    return MemStore(MemDriver(space_named(space)), clock=clock if clock is not None else SystemClock(), seed=seed)
