"""The ecosystem matrix (docs/ecosystem.md and docs/ecosystem.html) says what its committed reports say.

If this fails, the pages and docs/ecosystem/reports/ disagree: rebuild them with ``python -m tools.ecosystem_page``
(run from the repository root) after committing new reports, or check ``tools/ecosystem_page.py``.
Rule ids: the matrix's verdicts are the reports' clause verdicts, agreed by every run (else 'flips').
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from alkstore_contract.suite.profiles import SAFETY
from tools.ecosystem_page import (
    CLASSES,
    EngineRuns,
    NotesFileError,
    _by_hazard,
    build,
    cell,
    inline_html,
    load_notes,
    load_runs,
    main,
)

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "docs" / "ecosystem" / "reports"
NOTES = ROOT / "docs" / "ecosystem" / "notes.json"
TOPICS = (
    "delivery",
    "retry",
    "recovery after a crash",
    "what a late worker may do",
    "unique keys (K)",
    "enqueue in the caller's transaction (W)",
    "enqueue in the caller's transaction (W): none",
    "release (L): none",
)
"""What a library's quotes are about: its delivery and recovery promises, and (contract 2.1) the feature it has, or
the doc or code that says it has none, for each capability-bound family."""


def _check(reports: Path, markdown: Path, page: Path) -> int:
    paths = ["--reports", str(reports), "--notes", str(NOTES), "--markdown", str(markdown), "--html", str(page)]
    return main([*paths, "--check"])


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


def test_inline_markdown_becomes_html_and_nothing_else_does() -> None:
    """Matrix: a note's `code`, [link](url), **bold** and *emphasis* become HTML; markup in the text is escaped."""
    shown = inline_html("`a<b*c*` [contract.md](contract.md) **lost** *not promised* 2 * 3 <script>")
    assert shown == (
        '<code>a&lt;b*c*</code> <a href="contract.md">contract.md</a> <strong>lost</strong> '
        "<em>not promised</em> 2 * 3 &lt;script&gt;"
    )
    assert inline_html("``heartbeat_timeout`` is `x`") == "<code>heartbeat_timeout</code> is <code>x</code>"


def test_a_note_naming_what_a_check_showed_relabels_the_clause_and_nothing_else() -> None:
    """Matrix: pgqueuer's C1 (back on time, at the old attempt count) reads 'attempt not counted', not 'late
    recovery'; graphile-worker's C1 (its 4-hour lock) still reads 'late recovery'; an unknown label is refused."""
    engines = {e.name: e for e in load_runs(REPORTS, load_notes(NOTES))}
    safety = {name: _by_hazard("safety NOT PASSED", e.latest, e.notes) for name, e in engines.items()}
    assert "attempt not counted: C1" in safety["pgqueuer"]
    assert "late recovery" not in safety["pgqueuer"]
    assert "late recovery: C1" in safety["graphile-worker"]


def test_a_notes_file_naming_an_unknown_hazard_is_refused(tmp_path: Path) -> None:
    notes = json.loads(NOTES.read_text(encoding="utf-8"))
    notes["engines"]["pgqueuer"]["clauses"]["C1"]["shows"] = "slightly late"
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(notes), encoding="utf-8")
    with pytest.raises(NotesFileError, match="slightly late"):
        load_notes(path)


def test_a_report_made_before_hazards_reads_by_hazard_never_as_loss(tmp_path: Path) -> None:
    """Matrix: an old report's 'safety NOT PASSED (C1 H1 H5)' is shown by hazard, C1 as late recovery."""
    copied = tmp_path / "reports"
    shutil.copytree(REPORTS, copied)
    path = copied / "pg-boss-1.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    engine = report["engines"][0]
    engine["summary"] = "safety NOT PASSED (C1 H1 H5) · " + engine["summary"].split(" · ", 1)[1]
    for profile in engine["profiles"]:
        profile.pop("hazards", None)
        profile["failed"] = ["C1", "H1", "H5"]
    path.write_text(json.dumps(report), encoding="utf-8")
    markdown, _ = build(copied, NOTES)
    safety = next(line for line in markdown.splitlines() if line.startswith("| safety profile |"))
    assert "completed by a stale worker: H1 H5; late recovery: C1" in safety
    assert "(C1 H1 H5)" not in safety
    assert "lost" not in safety


def test_a_failure_classed_not_applicable_is_never_shown_as_the_librarys() -> None:
    """Matrix: graphile-worker's H1 judges the adapter's lease: its cell says not applicable, not fails."""
    runs = {e.name: e for e in load_runs(REPORTS, load_notes(NOTES))}
    found = cell(runs["graphile-worker"], "H1")
    assert found.kind == "not applicable"
    assert found.text.startswith("○ not applicable")
    assert found.note is not None
    assert "adapter's construct" in found.note


def _libraries() -> list[EngineRuns]:
    return [e for e in load_runs(REPORTS, load_notes(NOTES)) if "library" in e.notes]


def test_every_library_quotes_its_promises_and_classes_each_failed_safety_clause() -> None:
    """Matrix: each library quotes its docs (topic, words, where) and classes every safety clause it fails."""
    libraries = _libraries()
    assert {e.name for e in libraries} == {"pgqueuer", "procrastinate", "graphile-worker", "pg-boss"}
    for engine in libraries:
        promises = engine.notes["library"]["promises"]
        assert len(promises) >= 3, f"{engine.name}: too few promises quoted"
        for promise in promises:
            assert promise["topic"] in TOPICS, f"{engine.name}: {promise['topic']!r}"
            assert promise["quote"].strip(), f"{engine.name}: a promise without the docs' words"
            assert promise["where"].strip(), f"{engine.name}: a promise without where it is"
        failed = {
            c["clause"] for _, run in engine.runs for c in run["clauses"] if c["verdict"] in ("failed", "xfailed")
        }
        for clause_id in sorted(failed & set(SAFETY)):
            found = engine.notes.get("clauses", {}).get(clause_id, {}).get("class")
            assert found in CLASSES, f"{engine.name} {clause_id}: failed, but classed {found!r}"


def test_every_failure_counted_against_a_library_names_a_reproduction_that_exists() -> None:
    """Matrix: a safety failure classed 'own promise' or 'not promised' names a standalone reproduction in the tree."""
    for engine in _libraries():
        for clause_id, said in engine.notes.get("clauses", {}).items():
            if said.get("class") not in ("own promise", "not promised"):
                continue
            scripts = re.findall(
                r"ecosystem/\w+/adapter/(?:alkstore_\w+/)?reproduce\w*\.(?:py|js)", said["why"] + said["source"]
            )
            assert scripts, f"{engine.name} {clause_id}: counted against the library with no reproduction named"
            for script in scripts:
                assert (ROOT / script).is_file(), f"{engine.name} {clause_id}: {script} is not in the tree"


def test_a_capability_a_library_lacks_reads_no_such_feature_never_failed() -> None:
    """Matrix: pgqueuer has no release and no enqueue in a transaction: its L and W cells say so, with the
    library's own words, one note for the family; pg-boss's transactional enqueue, which the wire protocol
    cannot carry, reads 'not judged'."""
    runs = {e.name: e for e in load_runs(REPORTS, load_notes(NOTES))}
    for clause_id in ("L1", "L4", "W1", "W4"):
        found = cell(runs["pgqueuer"], clause_id)
        assert (found.kind, found.text) == ("not exercised", "– no such feature")
        assert found.note is not None
        assert "pgqueuer" in found.note
    assert cell(runs["pgqueuer"], "L2").subject == "L1–L4"
    assert cell(runs["pg-boss"], "W2").text.startswith("– not judged: the wire protocol")
    assert cell(runs["procrastinate"], "W1").kind == "passed"


def test_a_clause_missing_from_an_engines_reports_reads_not_judged(tmp_path: Path) -> None:
    """Matrix: an engine whose runs were made before a clause was written shows 'not judged', with the contract
    version of its runs, never a verdict it was not given."""
    copied = tmp_path / "reports"
    shutil.copytree(REPORTS, copied)
    for path in copied.glob("sqlite-*.json"):
        report = json.loads(path.read_text(encoding="utf-8"))
        report["engines"][0]["clauses"] = [c for c in report["engines"][0]["clauses"] if c["clause"] != "K1"]
        path.write_text(json.dumps(report), encoding="utf-8")
    sqlite = next(e for e in load_runs(copied, load_notes(NOTES)) if e.name == "sqlite")
    found = cell(sqlite, "K1")
    assert found.kind == "not exercised"
    assert found.text.startswith("– not judged (its runs: contract ")
