"""Mutant: an enqueue whose connection was reset is sent again on a fresh one — breaks N3.

contract N3 (at most once): an op cut during its commit may or may not have taken
effect, so an engine must not replay it behind the caller's back. This driver
catches a connection reset during an enqueue and runs the INSERT again, the
"helpful" retry every client library is tempted by: when the reset came after
the server committed, the job is stored twice. The ``network_faults`` row's
cut-enqueue leg catches it (the oracle counts two jobs).
"""

from __future__ import annotations

from datetime import datetime

from alkstore_postgres import PgDriver, ServerConnectionError

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, postgres_mutant


class RetryingDriver(PgDriver):
    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        try:
            return await super().insert(queue, jobs, now)
        except ServerConnectionError as exc:
            if isinstance(exc.__cause__, TimeoutError):
                raise
            return await super().insert(queue, jobs, now)


adapter = postgres_mutant("mut-pg-enqueue-retried", driver=RetryingDriver)
MUTANT = Mutant(
    clause="N3",
    rows=("network_faults",),
    what="an enqueue that met a connection reset is sent again on a fresh connection (a duplicate if it had committed)",
)
