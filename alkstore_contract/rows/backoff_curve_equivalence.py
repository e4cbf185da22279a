"""Row backoff_curve_equivalence: not written yet."""

from __future__ import annotations

from alkstore_contract.harness import RowContext
from alkstore_contract.suite import row


async def backoff_curve_equivalence(ctx: RowContext) -> None:
    """Not written yet."""
    raise NotImplementedError("row backoff_curve_equivalence is not written yet")


ROW = row("backoff_curve_equivalence", ("TODO",))(backoff_curve_equivalence)
