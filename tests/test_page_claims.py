"""The claims of docs/ecosystem.md and docs/runtime-faults.md are counted from the reports, and backed by files.

- A sentence of the form "every library…", "no runner…", "all the runtimes…" is generated (``{claim:NAME}`` in
  docs/ecosystem/notes.json, the claims block of docs/runtime-faults.md), never typed.
- Every failure classed *breaks its own promise* on either page has a standalone reproduction that exists and
  that ``ci/ecosystem.sh`` runs, or (runtime faults only) an entry of ``ecosystem/faults-reproductions.json``
  saying why it has none yet, which the page shows; every other non-zero count names its replay command.
- The page's sentence about reproductions agrees with the files: every ``ecosystem/<library>/adapter/reproduce*``
  script is one the notes name.
If this fails: rebuild with ``python -m tools.ecosystem_page`` and ``python -m tools.faults_claims``, or move a
typed universal sentence into a generated claim.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from alkstore_faults.table import load as load_faults
from tools import faults_claims
from tools.ecosystem_page import _CLAIM, load_notes, load_runs, own_promise_breaks, reproduced

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "docs" / "ecosystem" / "notes.json"
REPORTS = ROOT / "docs" / "ecosystem" / "reports"
CI = (ROOT / "ci" / "ecosystem.sh").read_text(encoding="utf-8")
FAULTS_PAGE = ROOT / "docs" / "runtime-faults.md"
UNIVERSAL = re.compile(
    r"\b(?:every|no|all|none of the)[ ](?:(?:other|the|of the|Redis|Postgres|Python|Node)[ ])?"
    r"(?:librar(?:y|ies)|runtimes?|runners?)\b(?![ ]setting)",
    re.IGNORECASE,
)
"""A sentence saying something of every (or no) library, runtime or runner."""
KNOWN_MISSING: list[str] = []
"""Broken promises of docs/runtime-faults.md with no standalone reproduction yet, as ``runner fault: reason``
(the reason is ``missing`` of its ecosystem/faults-reproductions.json entry, shown on the page). Empty: the
three pg-boss counts (pause, broker_restart, slow_handler) each have one."""


def _typed_prose_of_the_notes() -> list[str]:
    notes = json.loads(NOTES.read_text(encoding="utf-8"))
    lines = [*notes.get("intro", []), *notes.get("promises_intro", [])]
    lines += [line for section in notes.get("sections", []) for line in section["lines"]]
    return [_CLAIM.sub("", str(line)) for line in lines]


def _typed_prose_of_the_faults_page() -> str:
    text = FAULTS_PAGE.read_text(encoding="utf-8")
    for start, end in (("<!-- results:start -->", "<!-- results:end -->"), (faults_claims.START, faults_claims.END)):
        head, _, rest = text.partition(start)
        text = head + rest.partition(end)[2]
    return text


def test_no_typed_sentence_on_either_page_says_every_or_no_library() -> None:
    typed = [*_typed_prose_of_the_notes(), _typed_prose_of_the_faults_page()]
    found = [m.group(0) for text in typed for m in UNIVERSAL.finditer(text)]
    assert not found, f"typed universal sentences (generate them from the reports instead): {found}"


def test_the_universal_check_can_fail() -> None:
    assert UNIVERSAL.search("every library that redelivers ran a job twice")
    assert UNIVERSAL.search("with no persistence every Redis library loses what was queued")
    assert UNIVERSAL.search("No library here lost a job.")
    assert not UNIVERSAL.search("each note names the library's code")


def test_the_claims_block_of_the_faults_page_is_what_the_reports_say() -> None:
    assert faults_claims.main(["--check"]) == 0


def _libraries() -> list[Any]:
    return [e for e in load_runs(REPORTS, load_notes(NOTES)) if "library" in e.notes]


def test_every_own_promise_break_of_the_matrix_has_a_reproduction_ci_runs() -> None:
    """ecosystem.md: each failure classed *breaks its own promise* is shown by a script that exists, run by CI."""
    counted = 0
    for engine in _libraries():
        shown = reproduced(engine)
        for clause_id in own_promise_breaks(engine):
            assert clause_id in shown, f"{engine.name} {clause_id}: breaks its own promise, no reproduction shows it"
            counted += 1
        for entry in engine.notes["library"].get("reproductions", []):
            assert (ROOT / entry["file"]).is_file(), f"{engine.name}: {entry['file']} is not in the tree"
            assert entry["file"] in entry["command"], entry
            runs = re.search(rf"reproduce {re.escape(entry['ci_name'])} (\d+) .*{re.escape(entry['file'])}", CI)
            assert runs, f"ci/ecosystem.sh does not run {entry['file']}"
            assert int(runs.group(1)) == entry["scenarios"], f"{entry['file']}: CI expects {runs.group(1)} scenarios"
    assert counted >= 1


def test_every_reproduction_script_in_the_tree_is_one_the_page_names() -> None:
    """The page's count of reproductions is of the files: none unnamed, none named that is not there."""
    named = {entry["file"] for e in _libraries() for entry in e.notes["library"].get("reproductions", [])}
    files = {str(p.relative_to(ROOT)) for p in (ROOT / "ecosystem").glob("*/adapter/**/reproduce*.*")}
    assert named == files


def test_every_broken_promise_of_the_faults_page_has_a_reproduction_or_a_stated_reason() -> None:
    """runtime-faults.md: a count a quoted promise forbids has a standalone script (CI runs it), or is listed
    with why it has none: the page prints that reason beside the count, so it never passes silently."""
    reports = load_faults(faults_claims.REPORTS)
    reproductions = faults_claims.load_reproductions()
    broken = [c for c in faults_claims.counts(reports) if c.kind == "breaks its own promise"]
    assert broken, "the committed reports break no promise: check this test still counts them"
    page = FAULTS_PAGE.read_text(encoding="utf-8")
    missing = []
    for found in broken:
        entry = faults_claims.reproduction_of(found, reproductions)
        assert entry is not None, f"{found.runner} {found.outcome} under {found.fault}: no faults-reproductions entry"
        if "missing" in entry:
            assert entry["missing"] in page
            missing.append(f"{found.runner} {found.fault}: {entry['missing']}")
            continue
        assert (ROOT / entry["file"]).is_file(), entry
        assert entry["file"] in CI, f"ci/ecosystem.sh does not run {entry['file']}"
    assert missing == KNOWN_MISSING, f"the broken promises with no reproduction changed: {missing}"


def test_every_non_zero_count_of_the_faults_page_names_its_replay() -> None:
    page = FAULTS_PAGE.read_text(encoding="utf-8")
    for runner, fault in faults_claims.nonzero_cells(load_faults(faults_claims.REPORTS)):
        assert f"alkstore faults {runner} --fault {fault} " in page, f"{runner} {fault}: no replay command"


def test_an_own_promise_break_without_its_reproduction_is_named_and_fails() -> None:
    """The reproductions sentence and its check can fail: pg-boss with its scripts taken away."""
    from tools.ecosystem_page import _reproductions_sentence

    engines = load_runs(REPORTS, load_notes(NOTES))
    boss = next(e for e in engines if e.name == "pg-boss")
    boss.notes = {**boss.notes, "library": {**boss.notes["library"], "reproductions": []}}
    assert "H5" in own_promise_breaks(boss)
    assert "H5" not in reproduced(boss)
    assert "these have no standalone reproduction: pg-boss H5" in _reproductions_sentence(engines)


def test_a_broken_promise_with_no_reproduction_entry_says_so_on_the_page() -> None:
    reports = load_faults(faults_claims.REPORTS)
    block = faults_claims.render(reports, [])
    assert block.count("standalone reproduction: NONE LISTED") == len(
        [c for c in faults_claims.counts(reports) if c.kind == "breaks its own promise"]
    )
