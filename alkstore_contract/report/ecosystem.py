"""The ecosystem matrix: engines and libraries side by side, one row per clause, from committed reports.

Part of the report.

``alkstore matrix`` reads every report of a directory (each run of each engine
is one ``alkstore certify`` report) and a notes file (per engine: what it is,
the command that produced its reports, what its adapter could not avoid
emulating and why, and for each clause it fails a one-line explanation with
the library's own doc, code or issue), and writes the Markdown page and a
self-contained HTML page that say the same things:

- a column per engine, in the notes file's order; the safety profile's and the
  contract's verdict on top; then one row per clause with its verdict, marked
  *emulated* where the adapter built what the library lacks;
- a verdict counts only when every run of the engine agrees: a clause whose
  runs disagree shows ``flips`` with the count of each verdict, so a page never
  shows one lucky run;
- a numbered note for every cell that did not pass, from the notes file where
  it explains the clause, else the report's own first message;
- a table of the runs: version, storage, clock, dates, and the command.

``--check`` rebuilds both pages in memory and fails when a committed page
differs from what its reports say (``tests/test_ecosystem_matrix.py`` runs it).
"""

from __future__ import annotations

import html
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alkstore_contract.report.read import ReportFileError, read_report

SYMBOLS = {
    "passed": "✓ passed",
    "failed": "✗ failed",
    "xfailed": "✗ fails (listed)",
    "inconclusive": "? inconclusive",
    "not exercised": "– not exercised",
}
"""A clause verdict as a cell: characters every common text font has."""
QUIET_GAPS = ("capability", "untested")
"""Gaps a cell shows without a note: the engine does not declare the capability, or no row checks the clause."""
COLOURS = {"passed": "#dafbe1", "failed": "#ffebe9", "xfailed": "#ffebe9", "flips": "#fff8c5"}


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
    kind: str
    """``passed``, ``failed``, ``xfailed``, ``inconclusive``, ``not exercised`` or ``flips``."""
    text: str
    note: str | None


def cell(engine: EngineRuns, clause_id: str) -> Cell:
    """One clause on one engine over all its runs: the verdict they agree on, or ``flips``."""
    found = engine.clause_runs(clause_id)
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
    explained = engine.notes.get("clauses", {}).get(clause_id)
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
    lines = engine.summaries()
    parts = [line.split(" · contract ", 1) for line in lines]
    safety = sorted({p[0] for p in parts})
    contract = sorted({"contract " + p[1] if len(p) > 1 else p[0] for p in parts})
    return " / ".join(safety), " / ".join(c.removeprefix("contract ") for c in contract)


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
    rows: list[tuple[str, list[tuple[Cell, int | None]]]] = []
    verdicts = [_verdict_rows(e) for e in engines]
    rows.append(("safety profile", [(Cell(_kind(v[0]), v[0], None), None) for v in verdicts]))
    rows.append(("whole contract", [(Cell(_kind(v[1]), v[1], None), None) for v in verdicts]))
    for clause_id in clause_ids(engines):
        cells = []
        for engine in engines:
            found = cell(engine, clause_id)
            cells.append((found, number(f"{engine.name} {clause_id}: {found.note}" if found.note else None)))
        rows.append((clause_id, cells))
    return header, rows, notes


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
        rows.append(
            [
                engine.name,
                str(engine.notes.get("what", latest["version"])),
                str(latest.get("storage") or "—"),
                str(latest["clock"]),
                str(len(engine.runs)),
                _when(engine),
                f"`{_command(engine)}`",
            ]
        )
    return rows


RUNS_HEADER = ["engine", "what", "storage", "clock", "runs", "when", "command"]


def render_markdown(engines: list[EngineRuns], notes: dict[str, Any]) -> str:
    header, rows, footnotes = _table(engines)
    out = [f"# {notes.get('title', 'Ecosystem matrix')}", ""]
    out += [str(line) for line in notes.get("intro", [])]
    out += ["", "| clause | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    for label, cells in rows:
        shown = [c.text + (f" [{n}]" if n else "") for c, n in cells]
        out.append(f"| {label} | " + " | ".join(s.replace("|", "\\|") for s in shown) + " |")
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
        out += ["", f"## {section['title']}", ""] + [str(line) for line in section["lines"]]
    return "\n".join(out) + "\n"


def render_html(engines: list[EngineRuns], notes: dict[str, Any]) -> str:
    header, rows, footnotes = _table(engines)
    esc = html.escape
    title = esc(str(notes.get("title", "Ecosystem matrix")))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #d0d7de;padding:.3em .6em;"
        "vertical-align:top;font-size:.9em}th{background:#f6f8fa}code{font-size:.9em}</style>",
        f"</head><body><h1>{title}</h1>",
    ]
    parts += [f"<p>{esc(str(line))}</p>" for line in notes.get("intro", []) if str(line).strip()]
    parts.append("<table><tr><th>clause</th>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
    for label, cells in rows:
        tds = []
        for found, n in cells:
            colour = COLOURS.get(found.kind, "#f6f8fa")
            mark = f' <a href="#note-{n}">[{n}]</a>' if n else ""
            tds.append(f'<td style="background:{colour}">{esc(found.text)}{mark}</td>')
        parts.append(f"<tr><th>{esc(label)}</th>{''.join(tds)}</tr>")
    parts.append("</table><h2>Notes</h2><ol>")
    parts += [f'<li id="note-{i}">{esc(text)}</li>' for i, text in enumerate(footnotes, start=1)]
    parts.append("</ol><h2>Runs</h2><table><tr>" + "".join(f"<th>{h}</th>" for h in RUNS_HEADER) + "</tr>")
    for row in _runs_rows(engines):
        parts.append("<tr>" + "".join(f"<td>{esc(v.strip('`'))}</td>" for v in row) + "</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def build(reports_dir: Path, notes_path: Path) -> tuple[str, str]:
    """(Markdown, HTML) of the matrix the reports in ``reports_dir`` and the notes file give."""
    notes = load_notes(notes_path)
    engines = load_runs(reports_dir, notes)
    return render_markdown(engines, notes), render_html(engines, notes)
