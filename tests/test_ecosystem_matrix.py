"""The ecosystem matrix (docs/ecosystem.md and docs/ecosystem.html) says what its committed reports say.

If this fails, the pages and docs/ecosystem/reports/ disagree: rebuild them with ``alkstore matrix`` (run
from the repository root) after committing new reports, or check ``alkstore_contract/report/ecosystem.py``.
Rule ids: the matrix's verdicts are the reports' clause verdicts, agreed by every run (else 'flips').
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from alkstore_contract.report.cli import main
from alkstore_contract.report.ecosystem import build, cell, load_notes, load_runs

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "docs" / "ecosystem" / "reports"
NOTES = ROOT / "docs" / "ecosystem" / "notes.json"


def _check(reports: Path, markdown: Path, page: Path) -> int:
    paths = ["--reports", str(reports), "--notes", str(NOTES), "--markdown", str(markdown), "--html", str(page)]
    return main(["matrix", *paths, "--check"])


def test_the_committed_pages_are_what_the_committed_reports_say() -> None:
    """Matrix: rebuilding from docs/ecosystem/reports gives docs/ecosystem.md and docs/ecosystem.html byte for byte."""
    assert _check(REPORTS, ROOT / "docs" / "ecosystem.md", ROOT / "docs" / "ecosystem.html") == 0


def test_a_report_that_changes_a_verdict_makes_the_pages_stale(tmp_path: Path) -> None:
    """Matrix: flipping one clause verdict in one committed report makes --check fail, and the cell shows flips."""
    copied = tmp_path / "reports"
    shutil.copytree(REPORTS, copied)
    first = sorted(copied.glob("*.json"))[0]
    report = json.loads(first.read_text(encoding="utf-8"))
    engine = report["engines"][0]
    clause = next(c for c in engine["clauses"] if c["verdict"] == "passed")
    clause["verdict"], clause["detail"] = "failed", "[X] a verdict changed by this test"
    first.write_text(json.dumps(report), encoding="utf-8")
    markdown, page = tmp_path / "ecosystem.md", tmp_path / "ecosystem.html"
    markdown.write_text((ROOT / "docs" / "ecosystem.md").read_text(encoding="utf-8"), encoding="utf-8")
    page.write_text((ROOT / "docs" / "ecosystem.html").read_text(encoding="utf-8"), encoding="utf-8")
    assert _check(copied, markdown, page) == 1
    runs = {e.name: e for e in load_runs(copied, load_notes(NOTES))}
    changed = cell(runs[engine["name"]], clause["clause"])
    assert changed.kind == ("flips" if len(runs[engine["name"]].runs) > 1 else "failed")


def test_every_engine_column_has_three_runs_and_a_safety_verdict() -> None:
    """Matrix: each column rests on 3 runs, and the safety row gives a verdict for each engine."""
    engines = load_runs(REPORTS, load_notes(NOTES))
    assert {e.name: len(e.runs) for e in engines} == {e.name: 3 for e in engines}
    markdown, _ = build(REPORTS, NOTES)
    safety = next(line for line in markdown.splitlines() if line.startswith("| safety profile |"))
    assert safety.removeprefix("| safety profile |").count("safety ") == len(engines)
