"""Row crash_recovery: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def crash_recovery(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row crash_recovery is not written yet")


ROW = row("crash_recovery", ("TODO",))(crash_recovery)
