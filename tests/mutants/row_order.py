"""A pytest plugin (``-p tests.mutants.row_order``) that runs the named contract rows first.

``--alkstore-rows-first=claim_order,model_based`` moves those rows' items to
the front, in that order, and keeps every other item after them in collection
order. It reorders and never deselects: with ``-x`` a mutant run stops at the
row meant to kill it, yet a mutant that survives that row still meets every
other row, as in a whole-suite run.
"""

from __future__ import annotations

import pytest

OPTION = "--alkstore-rows-first"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        default="",
        help="comma-separated contract rows to run before all others (tests/mutants/row_order.py)",
    )


def _row_name(item: pytest.Item) -> str | None:
    for key, value in item.user_properties:
        if key == "alkstore_row":
            return str(value)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first = [name for name in str(config.getoption(OPTION)).split(",") if name]
    rank = {name: position for position, name in enumerate(first)}
    known = {_row_name(item) for item in items}
    missing = [name for name in first if name not in known]
    if missing:
        raise pytest.UsageError(f"{OPTION}: no collected row is named {missing}")
    items.sort(key=lambda item: rank.get(_row_name(item) or "", len(first)))
