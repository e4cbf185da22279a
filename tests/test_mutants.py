"""Every mutant is killed, by a row that cites the clause it breaks; every row kills some mutant.

A row that cannot fail is a defect: this is where the suite proves each row
can. One pytest run covers the whole catalog (see tests/mutants/kill_table.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.suite import ROW_MODULES
from tests.mutants.catalog import CatalogEntry, catalog
from tests.mutants.kill_table import killers, run_suite

ENTRIES = catalog()

pytestmark = pytest.mark.xdist_group("mutants")
"""Under ``pytest -n N --dist loadgroup`` every test here shares one worker, so the whole-catalog run behind
``kill_report`` happens once, not once per worker."""


@pytest.fixture(scope="session")
def kill_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_suite(ENTRIES, Path(tmp_path_factory.mktemp("mutants")) / "report.json")


def test_the_catalog_has_a_mutant_for_every_row() -> None:
    named = {row for entry in ENTRIES for row in entry.mutant.rows}
    assert set(ROW_MODULES) <= named, f"rows no mutant is meant to kill: {sorted(set(ROW_MODULES) - named)}"
    assert len(ENTRIES) >= 20


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_the_mutant_is_killed_by_a_row_citing_its_clause(entry: CatalogEntry, kill_report: dict[str, Any]) -> None:
    failed = killers(kill_report, entry.name)
    meant = {row: failed[row] for row in entry.mutant.rows if row in failed}
    assert meant, f"{entry.name} ({entry.mutant.what}) survived rows {entry.mutant.rows}; failed rows: {failed}"
    citing = [row for row, reason in meant.items() if f"[{entry.mutant.clause}]" in reason]
    assert citing, f"{entry.name}: rows {sorted(meant)} failed but none cites [{entry.mutant.clause}]: {meant}"


def test_every_row_kills_at_least_one_mutant(kill_report: dict[str, Any]) -> None:
    killed_by: dict[str, list[str]] = {row: [] for row in ROW_MODULES}
    for entry in ENTRIES:
        for row in killers(kill_report, entry.name):
            killed_by.setdefault(row, []).append(entry.name)
    idle = [row for row, mutants in killed_by.items() if not mutants]
    assert not idle, f"rows that failed on no mutant (they cannot fail): {idle}"
