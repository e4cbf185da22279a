"""The ecosystem adapters' expected-failures files name only rows, clauses and an engine that exist.

If this fails, an ``ecosystem/<library>/adapter/expected-failures.txt`` lists a row the suite does not have, a
clause the contract does not have, or an engine the matrix does not show: ``alkstore certify`` would report
the entry as matching nothing (or refuse the file) instead of listing a known difference. Check the row
names in ``alkstore_contract.suite.row.ROW_MODULES``, the clause ids of docs/contract.md, and
docs/ecosystem/notes.json. A row may fail a clause it does not declare (a check of C3 inside a lease row),
so an entry's clause is held to the contract, not to its row's declaration.
Rule ids: the expected-failures format (alkstore_contract/suite/xfail.py), one entry per ``row[engine] CLAUSE``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from alkstore_contract.suite.clauses import CLAUSES
from alkstore_contract.suite.row import all_rows
from alkstore_contract.suite.xfail import load_xfail_file

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    [
        *(ROOT / "ecosystem").glob("*/adapter/expected-failures.txt"),
        *(ROOT / "ecosystem").glob("*/adapter/alkstore_*/expected-failures.txt"),
    ]
)


def _library(path: Path) -> str:
    """The library a file belongs to: its folder under ``ecosystem/``."""
    return path.relative_to(ROOT / "ecosystem").parts[0]


ROW_ID = re.compile(r"^(?P<row>\w+)\[(?P<engine>[\w-]+)\]$")


def test_every_library_adapter_has_an_expected_failures_file() -> None:
    """xfail format: pgqueuer, procrastinate and pg-boss each ship one (a moved folder would make the rest vacuous)."""
    assert {_library(path) for path in FILES} >= {"pgqueuer", "procrastinate", "pgboss"}


@pytest.mark.parametrize("path", FILES, ids=_library)
def test_each_entry_names_a_row_its_clause_and_the_adapters_engine(path: Path) -> None:
    """xfail format: each entry is row[engine] CLAUSE reason, row and clause exist, one engine a file, in the matrix."""
    rows = {row.name for row in all_rows()}
    notes = json.loads((ROOT / "docs" / "ecosystem" / "notes.json").read_text(encoding="utf-8"))
    matrix_engines = set(notes["engines"])
    entries = [entry for listed in load_xfail_file(path).values() for entry in listed]
    assert entries, f"{path} lists nothing"
    engines = set()
    for entry in entries:
        match = ROW_ID.match(entry.row_id)
        assert match is not None, f"{path}:{entry.line}: {entry.row_id!r} is not row[engine]"
        assert match["row"] in rows, f"{path}:{entry.line}: no row {match['row']!r}"
        assert entry.clause in CLAUSES, f"{path}:{entry.line}: no clause {entry.clause}"
        assert entry.reason.strip(), f"{path}:{entry.line}: no reason"
        engines.add(match["engine"])
    assert len(engines) == 1, f"{path} names several engines: {sorted(engines)}"
    assert engines <= matrix_engines, f"{path}'s engine {engines} is not in docs/ecosystem/notes.json"
