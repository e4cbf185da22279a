"""What the docs claim about the suite matches the suite: tables, rules and the lines a run prints.

Rule ids: every clause (the rows table), the certificate rule, S3/N-family messages where named.
If one of these fails, a doc drifted from the code (or the code from the doc): fix whichever is wrong —
docs/capabilities.md's tables, docs/conformance-matrix.md, docs/certify-your-engine.md, docs/contract.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from alkstore_contract import errors
from alkstore_contract.suite.clauses import CLAUSES
from alkstore_contract.suite.row import all_rows

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
CAPABILITIES = (DOCS / "capabilities.md").read_text(encoding="utf-8")
TABLE_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \|", re.MULTILINE)
RANGE = re.compile(r"([A-Z])(\d+)–(?:[A-Z])?(\d+)")


def _expand(cell: str) -> set[str]:
    """``H1–H5 C3 C7`` (or ``up to E1–E7 …``) as the set of clause ids it names."""
    ids: set[str] = set()
    for token in cell.replace("up to", "").split():
        ranged = RANGE.fullmatch(token)
        if ranged:
            family, first, last = ranged.group(1), int(ranged.group(2)), int(ranged.group(3))
            ids |= {f"{family}{n}" for n in range(first, last + 1)}
        else:
            ids.add(token)
    return ids


def test_the_rows_table_lists_exactly_the_clauses_each_row_defines() -> None:
    """Every clause: a row defines what its legs declare, and the table says the same."""
    table = {name: _expand(cell) for name, cell in TABLE_ROW.findall(CAPABILITIES.split("## Rows, legs")[1])}
    for contract_row in all_rows():
        assert table.get(contract_row.name) == set(contract_row.clauses), (
            f"docs/capabilities.md's rows table gives {contract_row.name} {sorted(table.get(contract_row.name, []))}; "
            f"the row declares {sorted(contract_row.clauses)}"
        )


def test_the_rows_table_says_model_based_reaches_clauses_that_vary_with_the_seed() -> None:
    assert "varies with the seed" in " ".join(CAPABILITIES.split())


def test_every_row_of_the_shipped_engines_table_has_a_cell_per_column() -> None:
    section = CAPABILITIES.split("## What the shipped engines declare")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    widths = {line: line.count("|") for line in lines}
    assert len(set(widths.values())) == 1, f"rows with a cell too many or too few: {widths}"


def test_every_clause_is_defined_by_some_row_unless_untested() -> None:
    """Every clause: a clause no row declares could only ever be checked incidentally, and never pass."""
    declared = {c for contract_row in all_rows() for c in contract_row.clauses}
    orphans = [c.id for c in CLAUSES.values() if c.untested is None and c.id not in declared]
    assert not orphans, f"clauses no row declares (no leg can define them): {orphans}"


def test_contract_md_lists_every_error_the_contract_exports() -> None:
    """N1: StoreUnavailable is one of the contract's errors, and its errors list says so."""
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    listing = text.split("- Errors, all subclasses of `AlkstoreError`:")[1].split("\n- ")[0]
    exported = [
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.AlkstoreError) and value is not errors.AlkstoreError
    ]
    missing = [name for name in exported if f"`{name}`" not in listing]
    assert not missing, f"docs/contract.md's list of errors does not name {missing}"


def test_conformance_matrix_states_the_certificate_rule_of_capabilities_md_and_every_row() -> None:
    text = (DOCS / "conformance-matrix.md").read_text(encoding="utf-8")
    assert "every required row passed" not in text
    assert "capabilities.md#what-a-certificate-covers" in text
    missing = [r.name for r in all_rows() if f"`{r.name}`" not in text]
    assert not missing, f"docs/conformance-matrix.md does not name rows {missing}"


def test_certify_your_engine_shows_pytest_v_lines_as_pytest_prints_them() -> None:
    text = (DOCS / "certify-your-engine.md").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(PASSED|FAILED) \[.*\] alkstore::", text, re.MULTILINE)
    assert re.search(r"^alkstore::\w+\[[\w-]+\] (PASSED|FAILED) \[", text, re.MULTILINE)


def test_the_example_binds_no_attribute_over_a_submodule_of_the_same_name() -> None:
    """An author copying the example must not meet ``from pkg import adapter`` giving the instance, not the module."""
    package = REPO / "examples" / "alkstore_example_dict" / "alkstore_example_dict"
    modules = {path.stem for path in package.glob("*.py") if path.stem != "__init__"}
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    bound = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    assert not modules & bound, f"the example's __init__ binds {sorted(modules & bound)} over its submodules"


def test_the_networked_section_says_which_location_the_oracle_gets_and_that_client_retries_break_n3() -> None:
    """N3, N4: an author must know the oracle reads past the proxy, and that a client's own retries duplicate."""
    section = CAPABILITIES.split("## `networked`")[1].split("\n## ")[0]
    flat = " ".join(section.split())
    assert "`count_stored_jobs` and `drop_location` always receive the original location" in flat
    assert "client library's own retries" in flat
    assert "N3" in flat


def test_the_adapter_docstring_counts_its_optional_members_right() -> None:
    from alkstore_contract import adapter

    doc = str(adapter.__doc__)
    word = re.search(r"(\w+) members are optional", doc)
    assert word is not None
    listed = doc.split("members are optional")[1].split("\n\n")[1].count("\n- ") + 1
    numbers = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5, "Six": 6}
    said = numbers.get(word.group(1))
    assert said in (None, listed), f"the docstring says {word.group(1)} and lists {listed}"
