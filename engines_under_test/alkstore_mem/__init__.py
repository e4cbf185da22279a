"""alkstore's in-memory engine: the whole contract in pure Python, for tests and single-process apps.

A location is a named space in this process's memory; every store opened on
one name shares its jobs. Nothing is written anywhere, nothing survives the
process. Use ``open_store(space, clock=ManualClock())`` in an application's
tests to step through leases, retries and backoff without sleeping.
"""

from alkstore_mem.adapter import MemAdapter
from alkstore_mem.driver import MemDriver
from alkstore_mem.store import MemStore, open_store
from alkstore_mem.worker import MemSource

adapter = MemAdapter()
"""The ``mem`` engine's adapter (entry point ``alkstore.engines``)."""

__all__ = ["MemAdapter", "MemDriver", "MemSource", "MemStore", "adapter", "open_store"]
