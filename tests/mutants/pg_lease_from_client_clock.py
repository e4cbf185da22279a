"""Mutant: the Postgres claim computes its lease (and compares run_at) by the client's clock — breaks T3.

Every other statement keeps the server's clock (``statement_timestamp()``); only
a claim of a store opened without a clock fills in the client's
``datetime.now()``, as a driver that "helpfully" defaults ``now`` on the client
would. On one machine the two clocks agree and every other row passes; the
``server_clock`` row's server runs two hours ahead, so the claim finds nothing
due (the job's run_at is the server's now, in the client's future) and a lease
would lie two hours short. A store opened with an injected clock is untouched.
"""

from __future__ import annotations

from datetime import UTC, datetime

from alkstore_postgres.driver import PgDriver

from alkstore_contract.types import Job
from tests.mutants.catalog import Mutant, postgres_mutant


class ClientClockClaims(PgDriver):
    """Claims by the client's clock when the store has none; every other step keeps the server's (T3)."""

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        return await super().claim(queue, worker_id, n, token, now if now is not None else datetime.now(UTC))


adapter = postgres_mutant("mut-pg-lease-from-client-clock", driver=ClientClockClaims)
MUTANT = Mutant(
    clause="T3",
    rows=("server_clock",),
    what="a claim by a store without a clock takes now from the client's clock, not the server's",
)
