"""The in-memory engine's side of ``alkstore worker``: a store on a named space of this process.

The worker runtime (``alkstore_worker``) asks a source what it supports and never imports an engine: this class
has the shape of ``alkstore_worker.sources.WorkerSource`` and nothing more. One process holds the space, so there is
nothing to wake from elsewhere, nothing to take turns with, and ``alkstore worker --processes`` must stay 1.
"""

from __future__ import annotations

from alkstore_contract.surface import Store


class MemSource:
    """An in-memory space: one process only (``--processes`` > 1 would give each its own jobs)."""

    poll_max_s = 0.05
    """The longest an idle queue loop waits between claims."""
    one_process = True
    """The space lives in this process: a worker of ``--processes`` > 1 would see none of its jobs."""

    def __init__(self, space: str = "default") -> None:
        self.space = space
        self.description = f"mem:{space}"

    async def open(self) -> Store:
        """A new store on the space; the caller closes it."""
        from alkstore_mem.store import open_store

        return await open_store(self.space)
