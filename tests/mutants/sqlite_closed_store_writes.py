"""Mutant: a closed store keeps its connection for a grace period, and handle ops still write — breaks S3.

``close()`` flips the ``closed`` flag and returns at once, leaving the
connection open for ``GRACE_S`` seconds "for work still in flight"; the handle
ops skip the closed check (a worker "owns" its claim). ``queue()`` and every
queue op still refuse, but a handle claimed before the close can heartbeat,
retry, fail and ack after it: the closed store goes on writing.
``validation_and_closed_store``'s S3 leg catches it.

Two parts, because the kit owns one of them: the driver's ``close`` lingers
(storage), and the store's closed check (the kit's ``check_open``, which no
driver can bypass) lets handle ops through.

The connection is closed for real when the grace period ends, or when the
event loop shuts down first (the closing task is cancelled and closes it on
its way out), so no connection thread outlives the loop.
"""

from __future__ import annotations

import asyncio

from alkstore_sqlite import SqliteDriver, SqliteStore

from tests.mutants.catalog import Mutant, sqlite_mutant

HANDLE_OPS = frozenset({"ack", "retry", "fail", "heartbeat"})
GRACE_S = 30.0


class LingeringDriver(SqliteDriver):
    """Closing returns at once; the connection is closed only later."""

    _closer: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self._closer is None:
            self._closer = asyncio.ensure_future(self._close_later())

    async def _close_later(self) -> None:
        try:
            await asyncio.sleep(GRACE_S)
        finally:
            await super().close()


class HandleOpsIgnoreClosedStore(SqliteStore):
    def check_open(self, op: str) -> None:
        if op not in HANDLE_OPS:
            super().check_open(op)


adapter = sqlite_mutant("mut-sqlite-closed-store-writes", driver=LingeringDriver, store=HandleOpsIgnoreClosedStore)
MUTANT = Mutant(
    clause="S3",
    rows=("validation_and_closed_store",),
    what="close() leaves the connection open for a grace period and handle ops skip the closed check, so they write",
)
