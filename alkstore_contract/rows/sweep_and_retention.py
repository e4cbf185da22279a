"""Row sweep_and_retention: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def sweep_and_retention(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row sweep_and_retention is not written yet")


ROW = row("sweep_and_retention", ("TODO",))(sweep_and_retention)
