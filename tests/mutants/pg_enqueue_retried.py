"""Mutant: an enqueue whose connection was reset is sent again on a fresh one — breaks N3.

contract N3 (at most once): an op cut during its commit may or may not have taken
effect, so an engine must not replay it behind the caller's back. This store
catches a connection reset during an enqueue and runs the INSERT again, the
"helpful" retry every client library is tempted by: when the reset came after
the server committed, the job is stored twice. The ``network_faults`` row's
cut-enqueue leg catches it (the oracle counts two jobs).
"""

from __future__ import annotations

from typing import Any

from alkstore_postgres import PgStore, ServerConnectionError

from tests.mutants.catalog import Mutant, postgres_mutant


class RetryingStore(PgStore):
    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        try:
            return await super().fetch(op, template, *args)
        except ServerConnectionError as exc:
            if not op.startswith("enqueue") or isinstance(exc.__cause__, TimeoutError):
                raise
            return await super().fetch(op, template, *args)


adapter = postgres_mutant("mut-pg-enqueue-retried", store=RetryingStore)
MUTANT = Mutant(
    clause="N3",
    rows=("network_faults",),
    what="an enqueue that met a connection reset is sent again on a fresh connection (a duplicate if it had committed)",
)
