"""Row batch_ack_and_cancel: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def batch_ack_and_cancel(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row batch_ack_and_cancel is not written yet")


ROW = row("batch_ack_and_cancel", ("TODO",))(batch_ack_and_cancel)
