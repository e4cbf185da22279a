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

from typing import Any

from alkstore_postgres import PgJobHandle, PgStore, ServerConnectionError

from tests.mutants.catalog import Mutant, postgres_mutant

UNFENCED_ACK_SQL = (
    "WITH clock AS (SELECT COALESCE($1::timestamptz, statement_timestamp()) AS now) "
    "DELETE FROM {jobs} WHERE id = $2 AND $3::text IS NOT NULL AND state = 'processing' RETURNING id"
)


class OutageAwareStore(PgStore):
    reconnected = False
    """Set once an op of this store met an outage."""

    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        try:
            return await super().fetch(op, template, *args)
        except ServerConnectionError:
            self.reconnected = True
            raise


class UnfencedAfterReconnectHandle(PgJobHandle):
    async def _fenced(self, op: str, template: str, *args: object) -> bool:
        store = self._queue.store
        if op == "ack()" and isinstance(store, OutageAwareStore) and store.reconnected:
            template = UNFENCED_ACK_SQL
        return await super()._fenced(op, template, *args)


adapter = postgres_mutant(
    "mut-pg-ack-unfenced-after-reconnect", store=OutageAwareStore, handle=UnfencedAfterReconnectHandle
)
MUTANT = Mutant(
    clause="N5",
    rows=("network_faults",),
    what="after an outage, ack() deletes by id without the claim's token or lease (a lapsed holder completes it)",
)
