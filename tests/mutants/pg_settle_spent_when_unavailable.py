"""Mutant: an ``ack``/``retry``/``fail`` that raised ``StoreUnavailable`` still spends its handle — breaks N6.

contract N6: such an op did not return, so its handle is not spent and the same
claim may settle the job again once the store answers. Here the kit's one-shot
guard stays spent whatever the op did (the rule before N6), so a worker whose
ack met a cut connection cannot settle the job through its claim: the repeat
raises ``HandleSpent`` and the job runs again after its lease. The
``network_faults`` row's settle-in-doubt leg catches it; no row without a lost
answer can.

The guard is the kit's (``alkstore_contract.handles.OneShot``), shared by every
engine on the kit, so the mutant replaces ``OneShot.outcome`` on the Postgres
adapter's first ``open_store`` (this module runs alone in its pytest process,
as every mutant does).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from alkstore_postgres import PgAdapter

from alkstore_contract.clock import Clock
from alkstore_contract.handles import OneShot
from alkstore_contract.surface import Store
from tests.mutants.catalog import Mutant


async def _spent_anyway(self: OneShot, step: Awaitable[bool]) -> bool:
    """The op's outcome, the handle left spent even when it raised ``StoreUnavailable``."""
    return await step


class SpentWhenUnavailableAdapter(PgAdapter):
    name = "mut-pg-settle-spent-when-unavailable"

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        setattr(OneShot, "outcome", _spent_anyway)  # noqa: B010 - a method replaced on the shared class, on purpose
        return await super().open_store(location, clock=clock, seed=seed)


adapter: Any = SpentWhenUnavailableAdapter()
MUTANT = Mutant(
    clause="N6",
    rows=("network_faults",),
    what="an ack/retry/fail that raised StoreUnavailable still spends its handle: the claim cannot settle the job",
)
