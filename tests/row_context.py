"""A row's context for the tests that drive the harness itself, its checks counted as a row run counts them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from alkstore_contract.adapter import EngineAdapter
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import CURRENT, Ledger


@contextlib.contextmanager
def row_context(
    row: str, adapter: EngineAdapter, engine_spec: str, *, manual: bool, tolerance_s: float
) -> Iterator[RowContext]:
    """A ``RowContext`` (seed 1, one example) whose ledger of ``row`` is the current one while inside.

    The plugin's ``RowItem.runtest`` does the same around a row: a check made
    outside any row's current ledger would count nowhere.
    """
    ledger = Ledger(row=row)
    context = RowContext(
        adapter=adapter,
        engine_spec=engine_spec,
        manual=manual,
        seed=1,
        tolerance_s=tolerance_s,
        examples=1,
        ledger=ledger,
    )
    token = CURRENT.set(ledger)
    try:
        yield context
    finally:
        CURRENT.reset(token)
