"""Row enqueue_many_atomic: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def enqueue_many_atomic(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row enqueue_many_atomic is not written yet")


ROW = row("enqueue_many_atomic", ("TODO",))(enqueue_many_atomic)
