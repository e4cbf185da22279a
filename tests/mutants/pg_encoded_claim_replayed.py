"""Mutant: payloads sent base64-encoded, and a claim whose answer was lost replayed — breaks N3.

contract N3: a claim whose outcome the engine cannot know must say so
(``StoreUnavailable``: it may or may not have taken effect). This is the
engine of ``tests/engines/postgres_base64.py`` (payloads and worker ids never
cross the wire verbatim) whose claim, when it meets a lost connection, runs
once more on a fresh one and returns what the replay found: nothing, when the
lost claim had committed (its job sits under a lease nobody holds), or the job,
when it had not — the caller is told a definite outcome either way.
``network_faults``' lost-claim leg cuts the server's answer to each round trip
of the claim in turn and demands ``StoreUnavailable`` every time.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.types import Job
from tests.engines.postgres_base64 import Base64Driver, base64_adapter
from tests.mutants.catalog import Mutant


class ReplayClaimDriver(Base64Driver):
    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        try:
            return await super().claim(queue, worker_id, n, token, now)
        except StoreUnavailable:
            return await super().claim(queue, worker_id, n, token, now)


adapter = base64_adapter("mut-pg-encoded-claim-replayed", ReplayClaimDriver)
MUTANT = Mutant(
    clause="N3",
    rows=("network_faults",),
    what="payloads cross the wire base64-encoded, and a claim that met a lost connection is replayed on a fresh one",
)
