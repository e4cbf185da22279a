"""Mutant: payloads sent base64-encoded, and an enqueue that raised ``StoreUnavailable`` sent once more — breaks N3.

contract N3 (at most once): an enqueue whose answer was lost may have
committed; sending it again stores the job twice. This is the engine of
``tests/engines/postgres_base64.py`` (its payloads never cross the wire
verbatim, so a cut that looked for the payload's bytes never fired) with the
retry every client library is tempted by: any ``StoreUnavailable`` from the
insert, timeouts included, and the insert runs once more. ``network_faults``'
cut-enqueue leg cuts the server's answer to each round trip of the enqueue in
turn; the cut after the commit leaves two jobs, which the oracle counts.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.engines.postgres_base64 import Base64Driver, base64_adapter
from tests.mutants.catalog import Mutant


class RetryOnceDriver(Base64Driver):
    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        try:
            return await super().insert(queue, jobs, now)
        except StoreUnavailable:
            return await super().insert(queue, jobs, now)


adapter = base64_adapter("mut-pg-encoded-enqueue-retried", RetryOnceDriver)
MUTANT = Mutant(
    clause="N3",
    rows=("network_faults",),
    what="payloads cross the wire base64-encoded, and an enqueue that raised StoreUnavailable is sent once more",
)
