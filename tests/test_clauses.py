"""The clause registry against the published contract and the rows: no clause unchecked, none unknown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.clauses import CLAUSES, UnknownClause, binding, clause
from alkstore_contract.suite.row import all_rows

REPO = Path(__file__).resolve().parents[1]
ROWS = REPO / "alkstore_contract" / "suite" / "rows"
CONTRACT = REPO / "docs" / "contract.md"
CHECK = re.compile(r"\"([A-Z][0-9]{1,2})\"")
"""A clause id as the rows pass it to a check: a string literal such as ``"C4"``."""


def _cited_in_rows() -> set[str]:
    return {match for path in ROWS.rglob("*.py") for match in CHECK.findall(path.read_text(encoding="utf-8"))}


def test_every_clause_of_the_contract_is_registered_and_every_registered_clause_is_in_the_contract() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    in_contract = set(re.findall(r"^- \*\*([A-Z][0-9]+)\*\*", text, flags=re.MULTILINE))
    assert in_contract == set(CLAUSES), (
        f"docs/contract.md only: {sorted(in_contract - set(CLAUSES))}; "
        f"registry only: {sorted(set(CLAUSES) - in_contract)}"
    )


def test_every_clause_has_a_check_in_the_suite_unless_marked_untested() -> None:
    cited = _cited_in_rows()
    unchecked = [c.id for c in CLAUSES.values() if c.untested is None and c.id not in cited]
    assert not unchecked, f"clauses no row checks (mark them untested, with why, or write the check): {unchecked}"
    untested_but_checked = [c.id for c in CLAUSES.values() if c.untested is not None and c.id in cited]
    assert not untested_but_checked, f"clauses marked untested that rows do check: {untested_but_checked}"


def test_rows_cite_only_registered_clauses() -> None:
    unknown = sorted(_cited_in_rows() - set(CLAUSES))
    assert not unknown, f"ids the rows cite that docs/contract.md does not have: {unknown}"
    for contract_row in all_rows():
        for clause_id in contract_row.clauses:
            clause(clause_id)


def test_an_unknown_clause_is_named_in_the_error() -> None:
    with pytest.raises(UnknownClause, match=r"'Q9' is not a clause of docs/contract\.md"):
        clause("Q9")


def test_a_capability_clause_binds_only_an_engine_that_declares_it() -> None:
    core = {c.id for c in binding(frozenset())}
    assert "C4" in core
    assert not {"P3", "T2"} & core
    assert "P3" in {c.id for c in binding(frozenset({Capability.DURABLE}))}
    assert {c.capability for c in CLAUSES.values() if c.capability is not None} <= set(Capability)
