"""Mutant: a networked engine declaring ``durable`` whose adapter has no server-crash hook — breaks P3 (unchecked).

contract P3 for an engine whose storage is a server is about the server's
crash, which the suite can only cause through the adapter's
``CrashableServerAdapter`` members. This is the Postgres engine with those
members taken away (``None``, so the protocol check finds them missing): it
still declares ``durable``. The durability row's server-crash leg refuses the
declaration, failing P3 with a message naming the missing hook — a
declaration nothing checked is never certified (docs/capabilities.md).
"""

from __future__ import annotations

from typing import Any

from alkstore_postgres import PgAdapter

from tests.mutants.catalog import Mutant


class HooklessAdapter(PgAdapter):
    create_crashable_location: Any = None
    crash_server: Any = None
    restart_server: Any = None
    restart_within_s: Any = None

    @property
    def name(self) -> str:
        return "mut-pg-durable-without-crash-hook"


adapter = HooklessAdapter()
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="a networked engine declares durable, but its adapter has no hook to crash and restart its server",
)
