"""Row claim_order: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def claim_order(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row claim_order is not written yet")


ROW = row("claim_order", ("TODO",))(claim_order)
