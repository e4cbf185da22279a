"""alkstore's Postgres engine, on asyncpg.

``open_store(dsn, schema=..., clock=None)`` opens a store on one schema of a
Postgres database; with ``clock=None`` every operation reads the database
server's clock (contract T3). ``adapter`` is what the conformance suite loads
(entry point ``alkstore.engines``: ``postgres``).

The store is the engine kit's (``alkstore_contract.kit``) over ``PgDriver``,
which runs one SQL statement per storage step. The adapter imports without
asyncpg, so the engine is listed, and explains that the ``postgres`` extra is
missing, wherever alkstore is installed; the store and driver import asyncpg
and load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV, PgAdapter, adapter
from alkstore_postgres.errors import SchemaVersionError, ServerConnectionError
from alkstore_postgres.worker import PostgresSource

if TYPE_CHECKING:
    from alkstore_postgres.driver import PgDriver
    from alkstore_postgres.store import PgStore, open_store

_LAZY = {
    "open_store": "alkstore_postgres.store",
    "PgStore": "alkstore_postgres.store",
    "PgDriver": "alkstore_postgres.driver",
}

__all__ = [
    "DEFAULT_DSN",
    "DSN_ENV",
    "PgAdapter",
    "PgDriver",
    "PgStore",
    "PostgresSource",
    "SchemaVersionError",
    "ServerConnectionError",
    "adapter",
    "open_store",
]


def __getattr__(name: str) -> object:
    """Load the asyncpg-backed names on first access (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'alkstore_postgres' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
