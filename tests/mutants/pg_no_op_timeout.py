"""Mutant: no timeout on acquiring a connection or on a statement — breaks N1.

contract N1 (bounded failure): during an outage an op raises ``StoreUnavailable``
within the bound the adapter reports. This store waits for the server as long
as it takes (timeouts of eleven days): a partition
hangs every caller until it heals. The adapter still reports the engine's
bound, so the ``network_faults`` row's partition leg catches it — without
waiting for the hung ops.
"""

from __future__ import annotations

from typing import Any, Self

from alkstore_postgres import PgDriver

from tests.mutants.catalog import Mutant, postgres_mutant

NEVER_S = 10.0**6
"""Eleven days: as good as no timeout."""


class PatientDriver(PgDriver):
    @classmethod
    async def open(cls, dsn: str, **kwargs: Any) -> Self:
        kwargs.update(op_timeout_s=NEVER_S, connect_timeout_s=NEVER_S)
        return await super().open(dsn, **kwargs)


adapter = postgres_mutant("mut-pg-no-op-timeout", driver=PatientDriver)
MUTANT = Mutant(
    clause="N1",
    rows=("network_faults", "network_history"),
    what="no connect, acquire or statement timeout: an op during a partition waits until it heals",
)
