"""Row dead_letter: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def dead_letter(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row dead_letter is not written yet")


ROW = row("dead_letter", ("TODO",))(dead_letter)
