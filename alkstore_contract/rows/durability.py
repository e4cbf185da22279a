"""Row durability: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def durability(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row durability is not written yet")


ROW = row("durability", ("TODO",))(durability)
