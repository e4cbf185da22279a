"""A store's connections: what they are called, how they are released, and which errors mean the server was lost.

Connections are released to the pool without asyncpg's reset query. The pool
"resets" every connection it gets back by sending ``SELECT
pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL;`` — a second round
trip after every operation, which halves the throughput of a store whose
every operation is one statement. The reset undoes session state a caller may
have left behind; a store leaves none: it never takes session-level advisory
locks (the schema migration's lock is transaction-scoped), declares no
cursors, never LISTENs and never ``SET``\\ s a setting (the schema is spliced
into the SQL, not put in ``search_path``). So the reset query is empty. An
open transaction is still rolled back on release: asyncpg does that itself,
before and apart from the reset query.
"""

from __future__ import annotations

import asyncpg

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
)
"""What a lost or refused connection raises: a terminated backend (57P01), a dropped socket, a server down.

A backend killed under load mostly surfaces as asyncpg's ``ConnectionDoesNotExistError`` ("connection was
closed in the middle of operation"); one killed while its pooled connection sat idle can surface as
``InternalClientError`` ("cannot switch to state N; another operation (2) is in progress": the connection
is still consuming the server's FATAL message, asyncpg issues #784 and #1069). ``TimeoutError`` is a
statement, an acquire or a cancel that outlived its timeout (a silent server).
"""


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the server could not be reached, rather than that a statement was wrong.

    Besides ``CONNECTION_ERRORS``, asyncpg raises a bare ``InterfaceError``
    ("connection is closed") on a connection that was lost between two uses.
    Other interface errors (another operation in progress, bad client
    configuration, bad parameters) are bugs, not outages, and pass through.
    """
    if isinstance(exc, CONNECTION_ERRORS):
        return True
    return type(exc) is asyncpg.exceptions.InterfaceError and "connection is closed" in str(exc)


def application_name(schema: str) -> str:
    """The ``application_name`` of a store's connections, so an operator can find them in ``pg_stat_activity``."""
    return f"alkstore {schema}"


class StatelessConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg ships no type hints
    """An asyncpg connection whose release to the pool costs no round trip (see the module docstring)."""

    def get_reset_query(self) -> str:
        """No session state to undo (asyncpg >= 0.30 asks this)."""
        return ""

    def _get_reset_query(self) -> str:
        """The same for asyncpg < 0.30, which asked this private method; it still prefixes a ROLLBACK when needed."""
        return ""
