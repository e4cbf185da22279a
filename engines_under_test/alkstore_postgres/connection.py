"""The class of a store's pooled connections: released to the pool without a reset round trip.

asyncpg's pool "resets" every connection it gets back by sending
``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL;`` — a
second round trip after every operation, which halves the throughput of a
store whose every operation is one statement. The reset undoes session state
a caller may have left behind; a store leaves none: it never takes
session-level advisory locks (the schema migration's lock is
transaction-scoped), declares no cursors, never LISTENs and never ``SET``\\ s a
setting (the schema is spliced into the SQL, not put in ``search_path``). So
the reset query is empty. An open transaction is still rolled back on release:
asyncpg does that itself, before and apart from the reset query.
"""

from __future__ import annotations

import asyncpg


class StatelessConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg ships no type hints
    """An asyncpg connection whose release to the pool costs no round trip (see the module docstring)."""

    def get_reset_query(self) -> str:
        """No session state to undo (asyncpg >= 0.30 asks this)."""
        return ""

    def _get_reset_query(self) -> str:
        """The same for asyncpg < 0.30, which asked this private method; it still prefixes a ROLLBACK when needed."""
        return ""
