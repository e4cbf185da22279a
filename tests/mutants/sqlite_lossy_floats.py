"""Mutant: payload floats are stored to 7 significant digits (as a float32 would keep them) — breaks E8.

The driver rounds every float of a payload before it stores it, the way an
engine that serialises with ``"%.7g"`` or keeps numbers in a 32-bit column
would. Round numbers (``0.1``, ``2.5``, ``1e308``) survive; ``0.1 + 0.2``,
``math.pi`` or ``-1/3`` do not read back equal. ``validation_and_closed_store``'s
E8 leg catches it.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, sqlite_mutant


def _rounded(value: object) -> object:
    """``value`` with every float inside lists and dicts cut to 7 significant digits; anything else as is."""
    if isinstance(value, float):
        return float(f"{value:.7g}")
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


class LossyDriver(SqliteDriver):
    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        lossy = [json.dumps(_rounded(json.loads(text))) for text in jobs.payloads]
        return await super().insert(queue, dataclasses.replace(jobs, payloads=lossy), now)


adapter = sqlite_mutant("mut-sqlite-lossy-floats", driver=LossyDriver)
MUTANT = Mutant(
    clause="E8",
    rows=("validation_and_closed_store",),
    what="enqueue stores payload floats to 7 significant digits, so 0.1 + 0.2 reads back as 0.3",
)
