"""Every ecosystem adapter's expected-failures file names only rows and clauses that exist, for one engine.

Part of the project's tests.

rule: xfail-file (an expected-failures file per library, ``row[engine] CLAUSE reason``: suite/xfail.py).

If this fails, an ``ecosystem/*/expected-failures.txt`` line names a row the suite does not have (so the
entry could never match a failure), a clause docs/contract.md does not have, or another engine than the
file's others: correct the line from the report of a certify run, or check ``alkstore_contract/suite/row.py``.
A row may fail a clause it does not pin (a row checks what its steps touch), so the clause is not held to
the row's own list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alkstore_contract.suite.row import all_rows
from alkstore_contract.suite.xfail import load_xfail_file

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "ecosystem").glob("*/expected-failures.txt"))
ROWS = {row.name for row in all_rows()}


def test_xfail_file_there_are_files_to_check() -> None:
    """xfail-file: the glob finds the adapters' files (a moved directory would make the rest vacuous)."""
    assert len(FILES) >= 2, f"expected the ecosystem adapters' expected-failures files, found {FILES}"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.parent.name)
def test_xfail_file_each_entry_names_a_row_of_the_suite_and_one_engine(path: Path) -> None:
    """xfail-file: each line parses (its clause is the contract's), its row exists, one engine is named."""
    entries = [entry for found in load_xfail_file(path).values() for entry in found]
    assert entries, f"{path}: no entries"
    engines = set()
    for entry in entries:
        row, engine = entry.row_id.removesuffix("]").split("[", 1)
        engines.add(engine)
        assert row in ROWS, f"{path}, line {entry.line}: no row {row!r} (rows: {' '.join(sorted(ROWS))})"
        assert entry.reason, f"{path}, line {entry.line}: no reason given"
    assert len(engines) == 1, f"{path}: entries name several engines: {sorted(engines)}"
