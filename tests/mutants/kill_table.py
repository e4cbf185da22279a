"""Run every row on every mutant and write the kill table (``docs/mutants.md``).

``python -m tests.mutants.kill_table`` regenerates the page (``--mutant MODULE``:
only that mutant's row, the others kept as the last whole run left them). Each mutant runs
alone in its own subprocess (``tests/mutants/runner.py``), every row, no stop
at the first failure, ``--workers`` of them at a time. ``tests/test_mutants.py``
runs the same whole catalog when ``ALKSTORE_FULL_CATALOG=1``; its default
tests stop each mutant at its first failing row instead.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.mutants.catalog import CatalogEntry, catalog
from tests.mutants.runner import REPO, SEED, failed_rows, mutant_engine, run_mutant


def run_catalog(entries: list[CatalogEntry], *, workers: int = 2, progress: bool = False) -> dict[str, dict[str, Any]]:
    """Every row on every mutant, ``workers`` subprocesses at a time; the report of each, by module."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="alkstore-kill-table-") as scratch:

        def run(entry: CatalogEntry) -> tuple[str, dict[str, Any]]:
            report = run_mutant(entry, Path(scratch) / f"{entry.module}.json", stop_at_first_failure=False)
            if progress:
                killed_by = ", ".join(sorted(failed_rows(report))) or "SURVIVED"
                sys.stderr.write(f"[{time.monotonic() - started:6.1f} s] {entry.module}: {killed_by}\n")
            return entry.module, report

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(pool.map(run, entries))


KEPT_FROM = "## How far `model_based` reaches"
"""The page's hand-measured section (model_based's reach): kept as it is when the table is regenerated."""


HEADER = [
    "# Mutant kill table",
    "",
    "Each mutant is a real engine with one clause broken (`tests/mutants/`). This table is generated",
    "by `python -m tests.mutants.kill_table`, which runs every row on every mutant, each mutant in a",
    f"pytest process of its own (seed {SEED}). `tests/test_mutants.py` runs each mutant's own rows",
    "first and stops at the first failing row: it asserts the mutant is NOT CERTIFIED and killed by",
    "a row citing the broken clause.",
    "",
    "| mutant | clause | fault | rows that caught it |",
    "|---|---|---|---|",
]
SURVIVED = "**none — survived**"
TABLE_ROW = re.compile(r"^\| `([^`]+)` \|")
"""A line of the table, and the mutant's engine name in it."""


def table_row(entry: CatalogEntry, report: dict[str, Any]) -> str:
    """The mutant's line of the table: its engine name, clause, fault and the rows that failed on it."""
    shown = ", ".join(f"`{row}`" for row in sorted(failed_rows(report))) or SURVIVED
    if entry.mutant.known_survivor is not None:
        shown += f" (known survivor: {entry.mutant.known_survivor})"
    name = mutant_engine(report)["name"]
    return f"| `{name}` | {entry.mutant.clause} | {entry.mutant.what} | {shown} |"


def _table(rows: list[str]) -> str:
    killed = sum(SURVIVED not in row for row in rows)
    return "\n".join([*HEADER, *rows, "", f"{killed} of {len(rows)} mutants killed."]) + "\n"


def render(entries: list[CatalogEntry], reports: dict[str, dict[str, Any]]) -> str:
    """The whole table from a run of every mutant."""
    return _table([table_row(entry, reports[entry.module]) for entry in entries])


def merged(old: str, fresh: list[str]) -> str:
    """The table of ``old`` with each of the ``fresh`` lines in place of its mutant's line, or added.

    What ``--mutant`` writes: the rows of the mutants it ran, measured, and every other row as the last
    whole run left it. A mutant new to the table goes after the last line whose name sorts before its own.
    """
    rows = [line for line in old.splitlines() if TABLE_ROW.match(line)]
    for line in fresh:
        name = _name(line)
        at = [i for i, row in enumerate(rows) if _name(row) == name]
        if at:
            rows[at[0]] = line
            continue
        before = [i for i, row in enumerate(rows) if _name(row) < name]
        rows.insert(before[-1] + 1 if before else 0, line)
    return _table(rows)


def _name(line: str) -> str:
    match = TABLE_ROW.match(line)
    assert match is not None, f"not a line of the table: {line!r}"
    return match.group(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants.kill_table", description=__doc__)
    parser.add_argument("--workers", type=int, default=2, help="mutant subprocesses at a time (default 2)")
    parser.add_argument(
        "--mutant",
        action="append",
        metavar="MODULE",
        help="run only this mutant (a module of tests/mutants, repeatable) and update its row, keeping the others",
    )
    args = parser.parse_args(argv)
    entries = catalog()
    if args.mutant:
        unknown = sorted(set(args.mutant) - {entry.module for entry in entries})
        if unknown:
            parser.error(f"no mutant module {', '.join(unknown)} in tests/mutants")
        entries = [entry for entry in entries if entry.module in args.mutant]
    reports = run_catalog(entries, workers=args.workers, progress=True)
    page = REPO / "docs" / "mutants.md"
    old = page.read_text(encoding="utf-8") if page.exists() else ""
    kept = old[old.index(KEPT_FROM) :] if KEPT_FROM in old else ""
    if args.mutant:
        table = merged(old[: old.index(KEPT_FROM)] if kept else old, [table_row(e, reports[e.module]) for e in entries])
    else:
        table = render(entries, reports)
    page.write_text(table + ("\n" + kept if kept else ""), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
