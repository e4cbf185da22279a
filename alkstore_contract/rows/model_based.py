"""Row model_based: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def model_based(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row model_based is not written yet")


ROW = row("model_based", ("TODO",))(model_based)
