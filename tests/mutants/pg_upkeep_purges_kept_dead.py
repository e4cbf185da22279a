"""Mutant: the Postgres engine's upkeep also deletes dead jobs whose retention is ``None`` — breaks X2.

contract X2: dead jobs are deleted once ``died_at + retention <= now``, and
retention ``None`` keeps them forever. The engine vacuums its jobs table from
a task of its own once its statements have left enough dead row versions
(``alkstore_postgres.upkeep``); this one tidies the table first, as a vacuum
step tempted to clear out dead letters might, and reads a missing retention as
"nothing to keep". No sweep, claim or get_job changes: the job is lost only
once some thousands of jobs went through the store, which only
``sweep_and_retention``'s churn leg puts through a queue.
"""

from __future__ import annotations

from typing import Any

from alkstore_postgres import PgDriver
from alkstore_postgres.upkeep import Upkeep

from tests.mutants.catalog import Mutant, postgres_mutant

PURGE_SQL = "DELETE FROM {table} WHERE state = 'dead' AND dead_letter_retention_s IS NULL"


class PurgingUpkeep(Upkeep):
    """The store's vacuum, preceded by a delete of every dead job kept forever."""

    async def _vacuum(self) -> None:
        async with self._connections.connection() as conn:
            await conn.execute(PURGE_SQL.format(table=self._table))
        await super()._vacuum()


class PurgingUpkeepDriver(PgDriver):
    def __init__(self, pool: Any, **kwargs: Any) -> None:
        super().__init__(pool, **kwargs)
        self.upkeep = PurgingUpkeep(self.connections, self._placeholders["jobs"])


adapter = postgres_mutant("mut-pg-upkeep-purges-kept-dead", driver=PurgingUpkeepDriver)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention",),
    what="the Postgres upkeep deletes dead jobs whose retention is None (kept forever) before each vacuum",
)
