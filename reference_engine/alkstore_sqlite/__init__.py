"""alkstore's reference engine: a durable job queue in one SQLite file.

``open_store(path)`` opens (creating if needed) a store; ``adapter`` is what the
conformance suite loads through the ``alkstore.engines`` entry point ``sqlite``.
Several stores and several OS processes may share one file. The public surface
is the engine kit's (``alkstore_contract.kit``); ``SqliteDriver`` is what this
engine adds: the storage, as SQL statements.
"""

from alkstore_sqlite.adapter import SqliteAdapter, adapter
from alkstore_sqlite.driver import SqliteDriver
from alkstore_sqlite.schema import SCHEMA_VERSION, SchemaVersionError
from alkstore_sqlite.store import SqliteStore, open_store
from alkstore_sqlite.worker import SqliteSource

__all__ = [
    "SCHEMA_VERSION",
    "SchemaVersionError",
    "SqliteAdapter",
    "SqliteDriver",
    "SqliteSource",
    "SqliteStore",
    "adapter",
    "open_store",
]
