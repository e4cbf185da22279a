"""Row enqueue_opts_resolution: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def enqueue_opts_resolution(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row enqueue_opts_resolution is not written yet")


ROW = row("enqueue_opts_resolution", ("TODO",))(enqueue_opts_resolution)
