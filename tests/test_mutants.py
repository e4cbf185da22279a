"""Every mutant is NOT CERTIFIED and killed by a row that cites its clause; every row kills some mutant.

A row that cannot fail is a defect: this is where the suite proves each row
can. Each mutant runs in a pytest subprocess of its own, its own rows first,
stopping at the first failing row (tests/mutants/runner.py), so ``pytest -n 2``
spreads the catalog over both workers and a killed mutant usually costs one
row. ``ALKSTORE_FULL_CATALOG=1`` adds the whole-catalog run (every row on
every mutant, as ``python -m tests.mutants.kill_table`` renders it).

Every row kills some mutant, checked without gathering results across xdist
workers: ``witnesses()`` gives each row one mutant of its own that names it,
that mutant's run puts the row first, and its test asserts that this very row
killed it. So each row's proof is one test's own assertion, whichever worker
runs it; the row-level test only checks that every row has a witness.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.suite.row import ROW_MODULES, all_rows
from tests.mutants.catalog import CatalogEntry, catalog
from tests.mutants.kill_table import run_catalog
from tests.mutants.runner import failed_rows, mutant_engine, run_mutant

ENTRIES = catalog()
MODEL_BASED = "model_based"
CAPABILITY_ROWS = frozenset(row.name for row in all_rows() if not row.required)
PARTIAL_RUN = re.compile(r"did not run|not exercised|partial run", re.IGNORECASE)
"""A blocker the stopped (``-x``) run earns by leaving rows out, which says nothing about what the mutant did."""


def _own_order(entry: CatalogEntry) -> tuple[str, ...]:
    """The mutant's rows, required rows before capability rows (those run processes or many programs)."""
    return tuple(sorted(entry.mutant.rows, key=lambda row: row in CAPABILITY_ROWS))


def witnesses(entries: list[CatalogEntry]) -> dict[str, CatalogEntry]:
    """One mutant per row that names it, no mutant for two rows, known survivors left out.

    A mutant that names the row first is preferred (its author meant that row to
    catch it), then one whose run starts with the row anyway, so no witness runs
    a slow row before a quick one it names. Rows with fewer candidates are
    served first.
    """
    killable = [entry for entry in entries if entry.mutant.known_survivor is None]
    candidates = {row: [entry for entry in killable if row in entry.mutant.rows] for row in ROW_MODULES}
    chosen: dict[str, CatalogEntry] = {}
    taken: set[str] = set()
    for row in sorted(ROW_MODULES, key=lambda name: len(candidates[name])):
        free = [entry for entry in candidates[row] if entry.module not in taken]
        free.sort(key=lambda entry: (entry.mutant.rows[0] != row, _own_order(entry)[0] != row, entry.module))
        if free:
            chosen[row] = free[0]
            taken.add(free[0].module)
    return chosen


WITNESSED = {entry.module: row for row, entry in witnesses(ENTRIES).items()}


def _rows_first(entry: CatalogEntry) -> tuple[str, ...]:
    """The mutant's rows in its own order, the one it witnesses (if any) first."""
    witnessed = WITNESSED.get(entry.module)
    own = _own_order(entry)
    if witnessed is None:
        return own
    return (witnessed, *(row for row in own if row != witnessed))


def _spread_slow_first(entries: list[CatalogEntry]) -> list[CatalogEntry]:
    """The catalog in an order for xdist: the long runs first, each followed by a short one.

    Long runs: known survivors (they meet every row), then runs that start with
    model_based (a search for a failing program, then its shrinking), then with
    another capability row (real processes). xdist's load scheduling with
    ``--maxschedchunk=1`` (ci/test.sh) hands each worker two consecutive tests
    to start with, then one at a time: so the two longest runs start at once on
    both workers, and the many one-row runs fill in around the rest.
    """

    def cost(entry: CatalogEntry) -> tuple[bool, bool, bool]:
        first = _rows_first(entry)[0]
        return entry.mutant.known_survivor is None, first != "model_based", first not in CAPABILITY_ROWS

    ranked = sorted(entries, key=cost)
    slow = [entry for entry in ranked if cost(entry) != (True, True, True)]
    fast = ranked[len(slow) :]
    spread: list[CatalogEntry] = []
    for position, entry in enumerate(slow):
        spread.append(entry)
        spread.extend(fast[position : position + 1])
    return spread + fast[len(slow) :]


def _params(entries: list[CatalogEntry]) -> list[Any]:
    """One param per mutant; a known survivor's is a strict xfail of the kill assertions (not of a crashed run)."""
    params = []
    for entry in entries:
        survivor = entry.mutant.known_survivor
        marks = []
        if survivor is not None:
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"known survivor: {survivor}"))
        params.append(pytest.param(entry, id=entry.module, marks=marks))
    return params


def _certificate_blockers(engine: dict[str, Any], entry: CatalogEntry, killers: dict[str, str]) -> list[str]:
    """The reasons the certificate gives that name what the mutant did: a failed row of its own, or its clause."""
    clause = re.compile(rf"\b{re.escape(entry.mutant.clause)}\b")
    return [
        reason
        for reason in engine["not_certified_because"]
        if not PARTIAL_RUN.search(reason) and (any(row in reason for row in killers) or clause.search(reason))
    ]


@pytest.mark.parametrize("entry", _params(_spread_slow_first(ENTRIES)))
def test_the_mutant_is_killed_citing_its_clause_and_not_certified(entry: CatalogEntry, tmp_path: Path) -> None:
    first = _rows_first(entry)
    report = run_mutant(entry, tmp_path / "report.json", rows_first=first)
    assert mutant_engine(report)["clock"] == (entry.mutant.clock or "manual"), "the mutant ran on the clock it names"
    engine = mutant_engine(report)
    failed = failed_rows(report)
    meant = {row: reason for row, reason in failed.items() if row in entry.mutant.rows}
    assert meant, f"{entry.module} ({entry.mutant.what}) survived rows {entry.mutant.rows}; failed rows: {failed}"
    citing = {row: reason for row, reason in meant.items() if f"[{entry.mutant.clause}]" in reason}
    assert citing, f"{entry.module}: rows {sorted(meant)} failed but none cites [{entry.mutant.clause}]: {meant}"
    witnessed = WITNESSED.get(entry.module)
    if witnessed is not None:
        assert witnessed in citing, (
            f"{entry.module} is row {witnessed}'s witness, run first, but {witnessed} did not kill it citing "
            f"[{entry.mutant.clause}]; failed rows: {failed}"
        )
    assert engine["certified"] is False, f"{entry.module} is CERTIFIED although rows failed: {failed}"
    blockers = _certificate_blockers(engine, entry, citing)
    assert blockers, (
        f"{entry.module}: NOT CERTIFIED only because the stopped run left rows out, not for what the mutant did "
        f"(rows {sorted(citing)}, [{entry.mutant.clause}]): {engine['not_certified_because']}"
    )
    others = tuple(row for row in entry.mutant.rows if row != MODEL_BASED)
    if set(citing) == {MODEL_BASED} and others:
        again = failed_rows(run_mutant(entry, tmp_path / "again.json", rows_first=others))
        hand_made = [row for row in others if f"[{entry.mutant.clause}]" in again.get(row, "")]
        assert hand_made, (
            f"{entry.module}: only model_based caught it; the hand-written rows {others} it names must too "
            f"(issue 13), citing [{entry.mutant.clause}]: {again}"
        )


def test_the_catalog_has_a_mutant_for_every_row() -> None:
    named = {row for entry in ENTRIES for row in entry.mutant.rows}
    assert set(ROW_MODULES) <= named, f"rows no mutant is meant to kill: {sorted(set(ROW_MODULES) - named)}"
    unknown = sorted(named - set(ROW_MODULES))
    assert not unknown, f"mutants name rows the suite does not have: {unknown}"
    assert len(ENTRIES) >= 20


def test_every_row_kills_at_least_one_mutant() -> None:
    """Every row has a witness; the witness's own test asserts the row killed it (see the module docstring)."""
    unwitnessed = sorted(set(ROW_MODULES) - set(witnesses(ENTRIES)))
    assert not unwitnessed, f"rows with no mutant of their own to kill (add one naming the row): {unwitnessed}"


@pytest.mark.skipif(os.environ.get("ALKSTORE_FULL_CATALOG") != "1", reason="set ALKSTORE_FULL_CATALOG=1 to run it")
def test_the_whole_catalog_on_every_row() -> None:
    """Every row on every mutant (what docs/mutants.md shows): each mutant killed, each row kills some mutant."""
    reports = run_catalog(ENTRIES)
    survivors = [
        entry.module
        for entry in ENTRIES
        if entry.mutant.known_survivor is None and not set(failed_rows(reports[entry.module])) & set(entry.mutant.rows)
    ]
    assert not survivors, f"mutants none of their rows killed: {survivors}"
    killing = {row for report in reports.values() for row in failed_rows(report)}
    idle = sorted(set(ROW_MODULES) - killing)
    assert not idle, f"rows that failed on no mutant (they cannot fail): {idle}"
