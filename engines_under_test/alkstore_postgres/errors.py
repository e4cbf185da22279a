"""Errors only the Postgres engine raises, still inside the contract's ``AlkstoreError`` family.

They cover what the contract does not speak of: a server that goes away and a
schema written by a newer alkstore. Callers that catch ``AlkstoreError`` catch
these too.
"""

from __future__ import annotations

from alkstore_contract.errors import AlkstoreError, StoreUnavailable


class ServerConnectionError(StoreUnavailable):
    """The connection to the Postgres server failed, or stayed silent past a timeout, during an operation.

    The engine's ``StoreUnavailable`` (contract N1), kept under its own name for
    callers written before the contract had one.

    The operation was not confirmed, so it may or may not have taken effect (a
    commit can succeed just before the connection drops). The pool replaces the
    broken connection, so the next operation works once the server answers.
    """


class SchemaVersionError(AlkstoreError):
    """The store schema was written by a newer alkstore than this one; opening it could corrupt it."""
