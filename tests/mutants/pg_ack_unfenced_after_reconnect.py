"""Mutant: once its store has lost a connection, ``ack`` deletes by id, without the claim's fence — breaks N5.

contract N5 (H5 across a partition): a handle whose lease lapsed during a stall
cannot complete the job after it, even though its store reconnects. This
engine fences every handle op as usual, until an op of its store has met an
outage; from then on an ack deletes the job by id alone ("the lease may have
been renewed while we could not see it"). After a stall in which the lease
lapsed and another worker claimed the job, the old handle's ack deletes it
under the new holder and returns True. The ``network_faults`` row's
fenced-across-a-stall leg catches it; no row without a network fault can.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from alkstore_postgres import PgDriver, ServerConnectionError

from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mutated, postgres_mutant

UNFENCED_ACK_SQL = mutated(
    PgDriver.ACK_SQL,
    "token = $3 AND state = 'processing' AND lease_expires_at > (SELECT now FROM clock)",
    "$3::text IS NOT NULL AND state = 'processing'",
)
"""The engine's ack with neither the token nor the lease in its fence: the job goes by id and state."""


class UnfencedAfterReconnectDriver(PgDriver):
    reconnected = False
    """Set once a statement of this driver met an outage."""

    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        try:
            return await super().fetch(op, template, *args)
        except ServerConnectionError:
            self.reconnected = True
            raise

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        if not self.reconnected:
            return await super().ack(queue, job_id, token, now)
        return await self._fenced("ack", UNFENCED_ACK_SQL, job_id, token, now)


adapter = postgres_mutant("mut-pg-ack-unfenced-after-reconnect", driver=UnfencedAfterReconnectDriver)
MUTANT = Mutant(
    clause="N5",
    rows=("network_faults",),
    what="after an outage, ack() deletes by id without the claim's token or lease (a lapsed holder completes it)",
)
