"""Run every row on every mutant and write the kill table (``docs/mutants.md``).

``python -m tests.mutants.kill_table`` regenerates the page. Each mutant runs
alone in its own subprocess (``tests/mutants/runner.py``), every row, no stop
at the first failure, ``--workers`` of them at a time. ``tests/test_mutants.py``
runs the same whole catalog when ``ALKSTORE_FULL_CATALOG=1``; its default
tests stop each mutant at its first failing row instead.
"""

from __future__ import annotations

import argparse
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


def render(entries: list[CatalogEntry], reports: dict[str, dict[str, Any]]) -> str:
    lines = [
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
    killed = 0
    for entry in entries:
        report = reports[entry.module]
        caught = sorted(failed_rows(report))
        killed += bool(caught)
        shown = ", ".join(f"`{row}`" for row in caught) or "**none — survived**"
        if entry.mutant.known_survivor is not None:
            shown += f" (known survivor: {entry.mutant.known_survivor})"
        name = mutant_engine(report)["name"]
        lines.append(f"| `{name}` | {entry.mutant.clause} | {entry.mutant.what} | {shown} |")
    lines += ["", f"{killed} of {len(entries)} mutants killed."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants.kill_table", description=__doc__)
    parser.add_argument("--workers", type=int, default=2, help="mutant subprocesses at a time (default 2)")
    args = parser.parse_args(argv)
    entries = catalog()
    reports = run_catalog(entries, workers=args.workers, progress=True)
    page = REPO / "docs" / "mutants.md"
    old = page.read_text(encoding="utf-8") if page.exists() else ""
    kept = old[old.index(KEPT_FROM) :] if KEPT_FROM in old else ""
    page.write_text(render(entries, reports) + ("\n" + kept if kept else ""), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
