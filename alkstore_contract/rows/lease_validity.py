"""Row lease_validity: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def lease_validity(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row lease_validity is not written yet")


ROW = row("lease_validity", ("TODO",))(lease_validity)
