"""The ecosystem matrix: engines and libraries side by side, one row per clause, from committed reports.

``python -m tools.ecosystem_page`` (from the repository's root) reads every
report of a directory (each run of each engine is one ``alkstore certify``
report) and a notes file (per engine: what it is, the command that produced
its reports, what its adapter could not avoid emulating and why, and for each
clause it fails a one-line explanation with the library's own doc, code or
issue), and writes the Markdown page and a
self-contained HTML page that say the same things:

- a column per engine, in the notes file's order, headed by what it was judged
  with (library version, suite and contract version); the safety profile's
  verdict by hazard, then what of it breaks the library's own promise and what
  the library never promised (the notes file classes each failed clause), and
  the contract's verdict on top; then one row per clause, in plain words, with
  its verdict, marked *emulated* where the adapter built what the library
  lacks, and *not applicable* where a failure rests on that construct;
- a verdict counts only when every run of the engine agrees: a clause whose
  runs disagree shows ``flips`` with the count of each verdict, so a page never
  shows one lucky run;
- a numbered note for every cell that did not pass, from the notes file where
  it explains the clause, else the report's own first message;
- per library, what its docs promise (each entry the docs' words and where),
  its APIs and settings, and its findings;
- a table of the runs: version, suite and contract version, storage, clock,
  dates, and the command.
- no sentence saying what every (or no) library did is typed: the notes' prose
  places ``{claim:NAME}`` and this tool counts it from the reports (``claims``:
  whether a library lost a job, which failures a standalone reproduction shows,
  the runs; and, from docs/runtime-faults/*.json through ``tools.faults_claims``,
  what the runtime-faults runs showed), so committing new runtime-faults reports
  makes this page stale too;
- a failed safety clause is named by what its failed check judged: its hazard,
  or the note's ``shows`` (``SHOWN_APART``) when the check judged something else.

The HTML page renders the notes' inline Markdown (links, code, bold) as HTML,
so a browser shows no raw Markdown (``tests/test_ecosystem_page.py`` checks it
in headless Chromium).

``--check`` rebuilds both pages in memory and fails when a committed page
differs from what its reports say (``tests/test_ecosystem_matrix.py`` runs it).

A tool of the project's checkout, not of the wheel: the pages are the
project's, built from its committed reports, and no user of the package
rebuilds them. ``alkstore matrix`` runs this for one more release, deprecated.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alkstore_contract.report.model import HAZARDS, SAFETY
from alkstore_contract.report.read import ReportFileError, read_report
from alkstore_faults.table import load as load_faults
from tools import faults_claims

SYMBOLS = {
    "passed": "✓ passed",
    "failed": "✗ failed",
    "xfailed": "✗ fails (listed)",
    "inconclusive": "? inconclusive",
    "not exercised": "– not exercised",
    "not applicable": "○ not applicable",
}
"""A clause verdict as a cell: characters every common text font has."""
CLASSES = {
    "own promise": "breaks its own promise",
    "not promised": "not promised",
    "stricter": "the contract's stricter rule",
    "not applicable": "not applicable: the adapter's construct",
}
"""How the notes file classes a library's failed clause: ``own promise`` (what the library's docs promise does
not hold: a bug to report upstream), ``not promised`` (a documented difference, or one the docs never speak
of), ``stricter`` (the library keeps a rule of its own the contract makes stricter), ``not applicable`` (the
check judges what the adapter built because the library lacks it: never the library's failure)."""
SHOWN_APART = {
    "attempt not counted": "a lapsed lease's job came back on time but at the attempt count of the claim that lapsed",
}
"""What a failed safety clause can show besides its ``HAZARDS`` entry: a note's ``shows`` names it when the check
that failed judged that and not the hazard (C1 judges both that a lapsed lease is claimable at its deadline and
that the claim counts an attempt; pgqueuer fails only the second)."""
QUIET_GAPS = ("capability", "untested")
"""Gaps a cell shows without a note: the engine does not declare the capability, or no row checks the clause."""
FEATURES = {"L": "release", "K": "unique_keys", "W": "transactional_enqueue"}
"""The clause families of contract 2.1 an engine is bound by only when it declares their capability. A library
whose adapter does not declare one is shown by what its notes' ``features`` say of that capability (``verdict``:
``no such feature``, or why a feature it has is not judged), with the library's own doc or code as the note:
never as failed, and never as a bare gap."""
COLOURS = {
    "passed": "#dafbe1",
    "failed": "#ffebe9",
    "xfailed": "#ffebe9",
    "flips": "#fff8c5",
    "not applicable": "#eef1f4",
}


class NotesFileError(ValueError):
    """The notes file cannot be read or does not say what the matrix needs."""


@dataclass
class EngineRuns:
    """Every committed run of one engine, and what the notes file says about it."""

    name: str
    notes: dict[str, Any]
    runs: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    """``(report, engine entry)`` per run, oldest first."""

    @property
    def latest(self) -> dict[str, Any]:
        return self.runs[-1][1]

    def clause_runs(self, clause_id: str) -> list[dict[str, Any]]:
        return [c for _, engine in self.runs for c in engine["clauses"] if c["clause"] == clause_id]

    def summaries(self) -> list[str]:
        return [str(engine.get("summary", engine["certificate"])) for _, engine in self.runs]


def load_notes(path: Path) -> dict[str, Any]:
    try:
        notes: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotesFileError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(notes.get("engines"), dict) or not notes["engines"]:
        raise NotesFileError(f"{path}: needs an 'engines' object naming each engine of the matrix, in column order")
    for name, entry in notes["engines"].items():
        for clause_id, said in entry.get("clauses", {}).items():
            shows = said.get("shows")
            if shows is not None and shows not in (*HAZARDS, *SHOWN_APART):
                raise NotesFileError(
                    f"{path}: {name} {clause_id}: shows {shows!r}, which is none of {[*HAZARDS, *SHOWN_APART]}"
                )
    return notes


def load_runs(reports_dir: Path, notes: dict[str, Any]) -> list[EngineRuns]:
    """The runs of every engine the notes name, from every ``*.json`` report in ``reports_dir`` (by creation time)."""
    engines = {name: EngineRuns(name, dict(entry)) for name, entry in notes["engines"].items()}
    reports = sorted((read_report(p) for p in sorted(reports_dir.glob("*.json"))), key=lambda r: str(r["created_at"]))
    for report in reports:
        for engine in report["engines"]:
            if engine["name"] in engines:
                engines[engine["name"]].runs.append((report, engine))
    missing = [name for name, found in engines.items() if not found.runs]
    if missing:
        raise ReportFileError(f"{reports_dir}: no report of {', '.join(missing)}, which the notes file names")
    return list(engines.values())


def clause_ids(engines: list[EngineRuns]) -> list[str]:
    seen: dict[str, None] = {}
    for engine in engines:
        for entry in engine.latest["clauses"]:
            seen.setdefault(entry["clause"], None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the matrix: its ``kind`` (a verdict, ``flips`` or ``not applicable``: its colour), its text
    and its note, if any."""

    kind: str
    text: str
    note: str | None
    subject: str | None = None
    """What the note is about when it is not the one clause (``L1–L4``): cells of one subject share a note."""


def _undeclared(engine: EngineRuns, clause_id: str) -> Cell | None:
    """A clause of a capability the library's adapter does not declare, as the library's notes explain it."""
    family = clause_id.rstrip("0123456789")
    said = engine.notes.get("features", {}).get(FEATURES.get(family, ""))
    if said is None:
        return None
    clauses = sorted(c for c in clause_ids([engine]) if c.rstrip("0123456789") == family)
    subject = f"{clauses[0]}–{clauses[-1]}" if len(clauses) > 1 else clause_id
    return Cell("not exercised", f"– {said['verdict']}", f"{said['why']} — {said['source']}", subject)


def cell(engine: EngineRuns, clause_id: str) -> Cell:
    """One clause on one engine over all its runs: the verdict they agree on, or ``flips``."""
    found = engine.clause_runs(clause_id)
    if not found:
        contracts = sorted({str(report.get("contract_version", "?")) for report, _ in engine.runs})
        return Cell("not exercised", f"– not judged (its runs: contract {'/'.join(contracts)})", None)
    verdicts = Counter(str(c["verdict"]) for c in found)
    emulated = next((c.get("emulated") for c in found if c.get("emulated")), None)
    mark = " · emulated" if emulated else ""
    runs = len(engine.runs)
    if len(verdicts) > 1:
        counts = ", ".join(f"{v} {n}/{runs}" for v, n in sorted(verdicts.items()))
        return Cell("flips", f"↯ flips ({counts}){mark}", f"the {runs} runs disagree: {counts}")
    verdict = found[-1]
    kind = str(verdict["verdict"])
    gap = verdict.get("gap")
    text = SYMBOLS[kind] + (f" ({gap})" if gap else "") + mark
    if kind == "not exercised" and gap == "not declared" and (undeclared := _undeclared(engine, clause_id)):
        return undeclared
    explained = engine.notes.get("clauses", {}).get(clause_id)
    if explained and explained.get("class") == "not applicable" and kind in ("failed", "xfailed"):
        why = f"not applicable, the adapter's construct: {explained['why']} — {explained['source']}"
        return Cell("not applicable", SYMBOLS["not applicable"] + mark, why)
    if explained:
        note = f"{explained['why']} — {explained['source']}"
    elif kind == "passed" and emulated:
        note = f"emulated by the adapter: {emulated}"
    elif kind == "passed" or (kind == "not exercised" and gap in QUIET_GAPS):
        note = None
    else:
        note = str(verdict["detail"] or kind).splitlines()[0]
    return Cell(kind, text, note)


def _command(engine: EngineRuns) -> str:
    return str(engine.notes.get("command", f"alkstore certify {engine.name}"))


def _when(engine: EngineRuns) -> str:
    dates = sorted({str(report["created_at"])[:16].replace("T", " ") for report, _ in engine.runs})
    return f"{dates[0]} – {dates[-1]} UTC" if len(dates) > 1 else f"{dates[0]} UTC"


def _verdict_rows(engine: EngineRuns) -> tuple[str, str]:
    """(safety, contract) as the runs agree on them, or the distinct lines when they do not."""
    parts = [(str(run.get("summary", run["certificate"])).split(" · contract ", 1), run) for _, run in engine.runs]
    safety = sorted({_by_hazard(p[0], run, engine.notes) for p, run in parts})
    contract = sorted({"contract " + p[1] if len(p) > 1 else p[0] for p, _ in parts})
    return " / ".join(safety), " / ".join(c.removeprefix("contract ") for c in contract)


def _by_hazard(line: str, run: dict[str, Any], notes: dict[str, Any]) -> str:
    """A run's safety line naming each failed clause's hazard, whatever the report's age.

    Reports made before 0.2.0 name the failed clauses alone (``safety NOT PASSED (C1 H1 H5)``); their safety
    profile's ``failed`` list is named by ``HAZARDS`` here, so an old report never reads as loss either. A
    failure the notes class ``not applicable`` (it judges the adapter's construct) is named apart, after the
    hazards, and counts against the library only where nothing else failed: then the line says so.
    """
    if "NOT PASSED" not in line:
        return line
    profile = next((p for p in run.get("profiles", []) if p.get("name") == "safety"), None)
    if profile is None:
        return line
    explained = notes.get("clauses", {})
    failed = [str(c) for c in profile["failed"]]
    construct = [c for c in failed if explained.get(c, {}).get("class") == "not applicable"]
    own = [c for c in failed if c not in construct]
    aside = f"; not applicable, the adapter's construct: {' '.join(construct)}" if construct else ""
    if not own:
        return f"safety: only the adapter's construct fails ({' '.join(construct)})"
    return f"safety NOT PASSED ({_hazard_text(own, explained)}{aside})"


def hazard_of(clause_id: str, explained: dict[str, Any]) -> str | None:
    """What a failed safety clause shows: its note's ``shows`` (what the failed check judged), else its hazard."""
    shows = explained.get(clause_id, {}).get("shows")
    if shows:
        return str(shows)
    return next((hazard for hazard, members in HAZARDS.items() if clause_id in members), None)


def _hazard_text(clauses: list[str], explained: dict[str, Any]) -> str:
    """``completed by a stale worker: H1 H5; late recovery: C1``, in ``HAZARDS`` then ``SHOWN_APART`` order."""
    parts = []
    for hazard in (*HAZARDS, *SHOWN_APART):
        found = [c for c in clauses if hazard_of(c, explained) == hazard]
        if found:
            parts.append(f"{hazard}: {' '.join(found)}")
    return "; ".join(parts) if parts else " ".join(clauses)


def _classed(engine: EngineRuns, kind: str) -> str:
    """The library's failed safety clauses the notes class as ``kind``, by hazard; ``—`` for none."""
    verdicts = {c["clause"]: str(c["verdict"]) for c in engine.latest["clauses"]}
    explained = engine.notes.get("clauses", {})
    found = [
        c for c in SAFETY if verdicts.get(c) in ("failed", "xfailed") and explained.get(c, {}).get("class") == kind
    ]
    return _hazard_text(found, explained) if found else "—"


def _with_extra(shown: str, engine: EngineRuns) -> str:
    """After the classed clauses, a library's own-promise breaks that only its reproductions show (no clause row)."""
    extra = engine.notes.get("library", {}).get("extra")
    if not extra:
        return shown
    return str(extra) if shown == "—" else f"{shown}; {extra}"


def _headline_rows(engines: list[EngineRuns]) -> list[tuple[str, list[Cell]]]:
    """The rows above the clauses: what each column was judged with, safety by hazard and by class, contract."""
    verdicts = [_verdict_rows(e) for e in engines]
    rows: list[tuple[str, list[Cell]]] = [
        ("judged with", [Cell("not exercised", _judged_with(e), None) for e in engines]),
        ("safety profile", [Cell(_kind(v[0]), v[0], None) for v in verdicts]),
    ]
    for kind, label in (("own promise", "breaks its own promise"), ("not promised", "not promised by the library")):
        shown = [_classed(e, kind) if "library" in e.notes else "—" for e in engines]
        if kind == "own promise":
            shown = [_with_extra(t, e) for t, e in zip(shown, engines, strict=True)]
        rows.append((f"safety: {label}", [Cell("failed" if t != "—" else "passed", t, None) for t in shown]))
    rows.append(
        ("late recovery, measured", [Cell("not exercised", str(e.notes.get("recovery", "—")), None) for e in engines])
    )
    rows.append(("whole contract", [Cell(_kind(v[1]), v[1], None) for v in verdicts]))
    return rows


def _judged_with(engine: EngineRuns) -> str:
    """``suite 0.2.0 · contract 3``: the suite and contract versions every run of the column was made with."""
    suites = sorted({str(report.get("suite_version", "?")) for report, _ in engine.runs})
    contracts = sorted({str(report.get("contract_version", "?")) for report, _ in engine.runs})
    return f"suite {'/'.join(suites)} · contract {'/'.join(contracts)}"


def _table(engines: list[EngineRuns]) -> tuple[list[str], list[tuple[str, list[tuple[Cell, int | None]]]], list[str]]:
    """The header, the rows (label, cells with their note numbers) and the notes, shared by both renderers."""
    notes: list[str] = []

    def number(text: str | None) -> int | None:
        if text is None:
            return None
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    header = [_label(e) for e in engines]
    rows: list[tuple[str, list[tuple[Cell, int | None]]]] = [
        (label, [(c, None) for c in cells]) for label, cells in _headline_rows(engines)
    ]
    for clause_id in clause_ids(engines):
        cells = []
        for engine in engines:
            found = cell(engine, clause_id)
            subject = found.subject or clause_id
            cells.append((found, number(f"{engine.name} {subject}: {found.note}" if found.note else None)))
        rows.append((clause_id, cells))
    return header, rows, notes


def _row_label(clause_id: str, notes: dict[str, Any]) -> str:
    """``C1 — a job whose lease lapsed can be claimed again at the deadline``: the id and what is checked."""
    plain = notes.get("rows", {}).get(clause_id)
    return f"{clause_id} — {plain}" if plain else clause_id


def _label(engine: EngineRuns) -> str:
    """``sqlite 0.1.0``, or the version alone when it names the library already (``pgqueuer 1.6.0``)."""
    version = str(engine.latest["version"])
    return version if version.startswith(engine.name + " ") else f"{engine.name} {version}"


def _kind(line: str) -> str:
    if "NOT" in line:
        return "failed"
    return "passed" if "PASSED" in line or line.startswith("CERTIFIED") else "not exercised"


def _runs_rows(engines: list[EngineRuns]) -> list[list[str]]:
    rows = []
    for engine in engines:
        latest = engine.latest
        library = engine.notes.get("library", {})
        rows.append(
            [
                engine.name,
                str(engine.notes.get("what", latest["version"])),
                str(library.get("apis", "—")),
                str(library.get("settings", "—")),
                _judged_with(engine),
                str(latest.get("storage") or "—"),
                str(latest["clock"]),
                str(len(engine.runs)),
                _when(engine),
                f"`{_command(engine)}`",
            ]
        )
    return rows


RUNS_HEADER = ["engine", "what", "APIs used", "settings", "judged with", "storage", "clock", "runs", "when", "command"]


def _libraries(engines: list[EngineRuns]) -> list[EngineRuns]:
    return [e for e in engines if "library" in e.notes]


def _failed(engine: EngineRuns) -> list[str]:
    """The clauses the library fails in its latest run, but those the notes class as the adapter's construct."""
    explained = engine.notes.get("clauses", {})
    return [
        str(c["clause"])
        for c in engine.latest["clauses"]
        if c["verdict"] in ("failed", "xfailed") and explained.get(c["clause"], {}).get("class") != "not applicable"
    ]


def reproduced(engine: EngineRuns) -> dict[str, str]:
    """Each clause a standalone reproduction of the library shows (and ``extra``, its own-promise break that no
    clause row shows), with the file that shows it."""
    found: dict[str, str] = {}
    for entry in engine.notes.get("library", {}).get("reproductions", []):
        for clause_id in [*entry.get("clauses", []), *(["extra"] if entry.get("extra") else [])]:
            found.setdefault(str(clause_id), str(entry["file"]))
    return found


def own_promise_breaks(engine: EngineRuns) -> list[str]:
    """The library's failed clauses classed *breaks its own promise*, and ``extra`` when the notes give one."""
    explained = engine.notes.get("clauses", {})
    found = [c for c in _failed(engine) if explained.get(c, {}).get("class") == "own promise"]
    return found + (["extra"] if engine.notes.get("library", {}).get("extra") else [])


def _reproductions_sentence(engines: list[EngineRuns]) -> str:
    """How many library failures a standalone reproduction shows, counted from the notes and the reports."""
    libraries = _libraries(engines)
    own = [(e.name, c) for e in libraries for c in own_promise_breaks(e)]
    bare = [f"{name} {c}" for name, c in own if c not in reproduced(next(e for e in libraries if e.name == name))]
    shown = [(e.name, c) for e in libraries for c in _failed(e) if c in reproduced(e)]
    others = [f"{name} {c}" for name, c in shown if (name, c) not in own]
    failed = sum(len(_failed(e)) for e in libraries)
    extras = {e.name: str(e.notes["library"].get("extra", "")).split(":", 1)[0] for e in libraries}
    named = ", ".join(f"{n} {c}" if c != "extra" else f"{n}: {extras[n]} (no clause row shows it)" for n, c in own)
    head = (
        f"Of the {len(own)} failures classed *breaks its own promise* ({named}), "
        + (f"these have no standalone reproduction: {', '.join(bare)}. " if bare else "each has ")
        + "a standalone reproduction in the library's own language (its public API, its workers in separate "
        "processes where a worker plays a part, nothing of alkstore), which `ci/ecosystem.sh` runs and checks"
    )
    return (
        f"{head}; so do {len(others)} other failed clauses ({', '.join(others)}). The other "
        f"{failed - len(shown)} failed clauses of the libraries (`fails (listed)`) have none: the certify command "
        "of the Runs table replays them, and each note names the library's code or docs behind it."
    )


def _reproduction_lines(engines: list[EngineRuns]) -> list[str]:
    lines = []
    for engine in _libraries(engines):
        for entry in engine.notes["library"].get("reproductions", []):
            lines.append(f"- **{engine.name}** (`{entry['command']}`): {entry['what']}")
    return lines


def _lost_sentence(engines: list[EngineRuns]) -> str:
    """Whether a library lost a job in the matrix: a failed clause whose hazard is *lost*."""
    lost = [
        f"{e.name} {c}"
        for e in _libraries(engines)
        for c in _failed(e)
        if hazard_of(c, e.notes.get("clauses", {})) == "lost"
    ]
    return f"Lost a job: {', '.join(lost)}." if lost else "No library here lost a job."


def _runs_sentence(engines: list[EngineRuns]) -> str:
    """How many runs each column rests on, and what the runs' certificates and expected-failures files said."""
    runs = sorted({len(e.runs) for e in engines})
    count = str(runs[0]) if len(runs) == 1 else f"{runs[0]} to {runs[-1]}"
    ours = [e for e in engines if "library" not in e.notes]
    libraries = _libraries(engines)
    uncertified = [e.name for e in ours if not all(run["certified"] for _, run in e.runs)]
    unlisted = [e.name for e in libraries if not all(run.get("known_differences_only") for _, run in e.runs)]
    certified = (
        f"every run of this project's {len(ours)} engines was certified"
        if not uncertified
        else f"runs of {', '.join(uncertified)} were not certified"
    )
    listed = (
        f"every run of the {len(libraries)} libraries failed only what its expected-failures file lists"
        if not unlisted
        else f"runs of {', '.join(unlisted)} failed what their expected-failures files do not list"
    )
    return f"Every column rests on {count} runs; {certified}, and {listed}."


def claims(engines: list[EngineRuns], faults: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Every generated sentence the notes' prose may place with ``{claim:NAME}``: counted from the reports (the
    matrix's and the runtime-faults runs'), never typed, so a sentence saying "every" or "no" library is true of
    what was committed."""
    return {
        "lost": [_lost_sentence(engines)],
        "reproductions": [_reproductions_sentence(engines)],
        "reproduction_list": _reproduction_lines(engines),
        "runs": [_runs_sentence(engines)],
        "faults_lost": [faults_claims.outcome_sentence(faults, "lost", "lost a job")],
        "faults_twice": [faults_claims.outcome_sentence(faults, "twice", "ran a job twice")],
        "faults_fence": [faults_claims.outcome_sentence(faults, "stale_refused", "refused a late completion")],
        "faults_replay": [faults_claims.replay_sentence(faults)],
    }


_CLAIM = re.compile(r"\{claim:([a-z_]+)\}")


def expand(lines: list[Any], found: dict[str, list[str]]) -> list[str]:
    """The notes' prose with each ``{claim:NAME}`` replaced: a line that is only the token becomes the claim's
    lines, a token inside a line its one sentence. An unknown name is the notes file's error."""
    out: list[str] = []
    for line in map(str, lines):
        for name in _CLAIM.findall(line):
            if name not in found:
                raise NotesFileError(f"the notes place {{claim:{name}}}, which is none of {sorted(found)}")
        whole = _CLAIM.fullmatch(line.strip())
        if whole:
            out += found[whole.group(1)]
        else:
            out.append(_CLAIM.sub(lambda m: " ".join(found[m.group(1)]), line))
    return out


def _promise_rows(engine: EngineRuns) -> list[list[str]]:
    return [[str(p["topic"]), f"“{p['quote']}”", str(p["where"])] for p in engine.notes["library"].get("promises", [])]


def render_markdown(engines: list[EngineRuns], notes: dict[str, Any], claimed: dict[str, list[str]]) -> str:
    header, rows, footnotes = _table(engines)
    out = [f"# {notes.get('title', 'Ecosystem matrix')}", ""]
    out += expand(notes.get("intro", []), claimed)
    out += ["", "| what is checked | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    for label, cells in rows:
        shown = [c.text + (f" [{n}]" if n else "") for c, n in cells]
        out.append(f"| {_row_label(label, notes)} | " + " | ".join(s.replace("|", "\\|") for s in shown) + " |")
    out += ["", "## What each library promises", ""]
    out += expand(notes.get("promises_intro", []), claimed)
    for engine in _libraries(engines):
        library = engine.notes["library"]
        out += ["", f"### {_label(engine)}", "", "| topic | the library's docs | where |", "|---|---|---|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in _promise_rows(engine)]
        if library.get("findings"):
            out += ["", "Findings: " + ", ".join(f"[{f}](ecosystem/findings/{f})" for f in library["findings"])]
    out += ["", "## Notes", ""]
    out += [f"{i}. {text}" for i, text in enumerate(footnotes, start=1)]
    out += ["", "## Runs", "", "| " + " | ".join(RUNS_HEADER) + " |", "|" + "---|" * len(RUNS_HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in _runs_rows(engines)]
    out += ["", "## What each adapter could not avoid", ""]
    for engine in engines:
        emulates = engine.latest.get("emulates") or {}
        said = str(engine.notes.get("unavoidable", "nothing: the engine implements the contract itself"))
        out.append(f"- **{engine.name}**: {said}")
        out += [f"  - `{clause_id}` emulated: {why}" for clause_id, why in emulates.items()]
    for section in notes.get("sections", []):
        out += ["", f"## {section['title']}", "", *expand(section["lines"], claimed)]
    return "\n".join(out) + "\n"


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CODE = re.compile(r"``(.+?)``|`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*]*?)\*(?![*\w])")


def inline_html(text: str) -> str:
    """The notes' inline Markdown as HTML: `code`, [text](url), **bold** and *italic*; everything else escaped.

    Code spans are set aside first, so a bracket or asterisk inside code stays code, and the rest is escaped
    before links and bold are made, so nothing in a note can inject markup.
    """
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(match.group(1) or match.group(2))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    escaped = html.escape(_CODE.sub(keep, text), quote=False)
    linked = _LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', escaped)
    bold = _ITALIC.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", linked))
    return re.sub("\x00([0-9]+)\x00", lambda m: codes[int(m.group(1))], bold)


def render_html(engines: list[EngineRuns], notes: dict[str, Any], claimed: dict[str, list[str]]) -> str:
    header, rows, footnotes = _table(engines)
    esc = html.escape
    title = esc(str(notes.get("title", "Ecosystem matrix")))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:110em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:.3em .6em;"
        "vertical-align:top;font-size:.9em}th{background:#f6f8fa;text-align:left}th.row{font-weight:normal;"
        "max-width:28em}code{font-size:.9em;background:#f6f8fa;padding:0 .2em}</style>",
        f"</head><body><h1>{title}</h1>",
    ]
    parts += [f"<p>{inline_html(line)}</p>" for line in expand(notes.get("intro", []), claimed) if line.strip()]
    parts.append('<table id="matrix"><tr><th>what is checked</th>' + "".join(f"<th>{esc(h)}</th>" for h in header))
    parts.append("</tr>")
    for label, cells in rows:
        tds = []
        for found, n in cells:
            colour = COLOURS.get(found.kind, "#f6f8fa")
            mark = f' <a href="#note-{n}">[{n}]</a>' if n else ""
            tds.append(f'<td style="background:{colour}">{inline_html(found.text)}{mark}</td>')
        parts.append(f'<tr><th class="row">{inline_html(_row_label(label, notes))}</th>{"".join(tds)}</tr>')
    parts.append("</table><h2>What each library promises</h2>")
    promised = expand(notes.get("promises_intro", []), claimed)
    parts += [f"<p>{inline_html(line)}</p>" for line in promised if line.strip()]
    for engine in _libraries(engines):
        library = engine.notes["library"]
        parts.append(
            f"<h3>{esc(_label(engine))}</h3><table><tr><th>topic</th><th>the library's docs</th><th>where</th></tr>"
        )
        parts += [
            "<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>" for row in _promise_rows(engine)
        ]
        parts.append("</table>")
        if library.get("findings"):
            links = ", ".join(f'<a href="ecosystem/findings/{esc(f)}">{esc(f)}</a>' for f in library["findings"])
            parts.append(f"<p>Findings: {links}</p>")
    parts.append("<h2>Notes</h2><ol>")
    parts += [f'<li id="note-{i}">{inline_html(text)}</li>' for i, text in enumerate(footnotes, start=1)]
    parts.append("</ol><h2>Runs</h2><table><tr>" + "".join(f"<th>{h}</th>" for h in RUNS_HEADER) + "</tr>")
    for row in _runs_rows(engines):
        parts.append("<tr>" + "".join(f"<td>{inline_html(v)}</td>" for v in row) + "</tr>")
    parts.append("</table><h2>What each adapter could not avoid</h2><ul>")
    for engine in engines:
        emulates = engine.latest.get("emulates") or {}
        said = str(engine.notes.get("unavoidable", "nothing: the engine implements the contract itself"))
        items = "".join(
            f"<li><code>{esc(c)}</code> emulated: {inline_html(str(why))}</li>" for c, why in emulates.items()
        )
        parts.append(
            f"<li><strong>{esc(engine.name)}</strong>: {inline_html(said)}"
            + (f"<ul>{items}</ul>" if items else "")
            + "</li>"
        )
    parts.append("</ul>")
    for section in notes.get("sections", []):
        parts.append(f"<h2>{esc(str(section['title']))}</h2>")
        parts += [f"<p>{inline_html(line)}</p>" for line in expand(section["lines"], claimed) if line.strip()]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def build(reports_dir: Path, notes_path: Path, faults_dir: Path | None = None) -> tuple[str, str]:
    """(Markdown, HTML) of the matrix the reports in ``reports_dir`` and the notes file give; the sentences about
    the runtime-faults runs are counted from the reports in ``faults_dir`` (default: docs/runtime-faults)."""
    notes = load_notes(notes_path)
    engines = load_runs(reports_dir, notes)
    claimed = claims(engines, load_faults(faults_dir or faults_claims.REPORTS))
    return render_markdown(engines, notes, claimed), render_html(engines, notes, claimed)


REPO = Path(__file__).resolve().parents[1]
COMMAND = "python -m tools.ecosystem_page"


def parser() -> argparse.ArgumentParser:
    """The tool's options; every default is a path in the repository, wherever it is run from."""
    top = argparse.ArgumentParser(
        prog=COMMAND,
        description="Rebuild the ecosystem matrix (docs/ecosystem.md and its HTML page) from every report in "
        "--reports and the notes file: one column per engine, one row per clause, each verdict agreed by all its "
        "runs (else 'flips'), native or emulated. --check writes nothing and exits 1 when a page disagrees with "
        "the reports.",
    )
    docs = REPO / "docs"
    for flag, default, metavar, what in (
        ("--reports", docs / "ecosystem" / "reports", "DIR", "the reports (*.json)"),
        ("--notes", docs / "ecosystem" / "notes.json", "PATH", "the notes file"),
        ("--markdown", docs / "ecosystem.md", "PATH", "the Markdown page"),
        ("--html", docs / "ecosystem.html", "PATH", "the HTML page"),
    ):
        shown = default.relative_to(REPO)
        top.add_argument(flag, default=default, type=Path, metavar=metavar, help=f"{what} (default: {shown})")
    top.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    return top


def _fail(message: str) -> int:
    """One line on stderr and exit code 2: what a user can act on, not a traceback."""
    sys.stderr.write(f"{COMMAND}: {message}\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    """Rebuild the ecosystem pages from the committed reports, or (``--check``) say which page is stale."""
    args = parser().parse_args(argv)
    try:
        markdown, page = build(args.reports, args.notes)
    except (ReportFileError, NotesFileError) as exc:
        return _fail(str(exc))
    stale = []
    for path, text in ((args.markdown, markdown), (args.html, page)):
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            return _fail(f"{path}: cannot be written ({exc.strerror or exc})")
    if stale:
        sys.stderr.write(
            f"{COMMAND}: {', '.join(stale)} disagree(s) with the reports in {args.reports}; rebuild with {COMMAND}\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
