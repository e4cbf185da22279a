"""Row validation_and_closed_store: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def validation_and_closed_store(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row validation_and_closed_store is not written yet")


ROW = row("validation_and_closed_store", ("TODO",))(validation_and_closed_store)
