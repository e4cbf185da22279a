"""The conformance matrix (rows × engines) of one or more JSON reports, as HTML or Markdown.

Part of the report.

Both forms say the same things: each cell's outcome and duration, the reason
behind every cell that did not pass and every note a row left, as numbered
notes under the table, the verdict and certificate line per engine, a table of
clause verdicts (clauses × engine runs), and a table of the runs (engine
version, clock, capabilities, Python, platform, seed, when).

The HTML is one self-contained page (inline CSS, no script, no external asset,
no emoji font needed) so it can be attached to a release or opened from a CI
artifact, and it reads the same on screen, in a screenshot and on paper.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "absent")
SYMBOLS = {"passed": "✅ passed", "failed": "❌ failed", "skipped": "⏭ skipped", "xfailed": "⚠ xfailed", "absent": "—"}
"""Markdown cells (rendered where emoji are)."""
HTML_SYMBOLS = {
    "passed": "✓ passed",
    "failed": "✗ failed",
    "skipped": "– skipped",
    "xfailed": "⚠ xfailed",
    "absent": "—",
}
"""HTML cells: characters every common text font has."""
COLOURS = {
    "passed": ("#dafbe1", "#116329"),
    "failed": ("#ffebe9", "#a40e26"),
    "skipped": ("#fff8c5", "#7d4e00"),
    "xfailed": ("#fbefff", "#6639ba"),
    "absent": ("#f6f8fa", "#57606a"),
}
"""Background and text colour of each outcome's cells."""
VERDICT_COLOURS = {True: "#1a7f37", False: "#cf222e"}
CLAUSE_SYMBOLS = {
    "passed": "✓ passed",
    "failed": "✗ failed",
    "xfailed": "⚠ xfailed",
    "inconclusive": "? inconclusive",
    "not exercised": "– not exercised",
}
"""A clause verdict's cell (both renderers): characters every common text font has."""
CLAUSE_CLASSES = {
    "passed": "passed",
    "failed": "failed",
    "xfailed": "xfailed",
    "inconclusive": "skipped",
    "not exercised": "absent",
}
"""Which outcome colour a clause verdict's cell takes."""


@dataclass(frozen=True, slots=True)
class Column:
    """One engine run: an engine under one clock mode, from one report."""

    label: str
    engine: dict[str, Any]
    report: dict[str, Any]

    def cell(self, row: str) -> dict[str, Any] | None:
        for entry in self.engine["rows"]:
            if entry["row"] == row:
                found: dict[str, Any] = entry
                return found
        return None

    @property
    def certified(self) -> bool:
        return bool(self.engine["certified"])

    @property
    def duration_s(self) -> float:
        return float(sum(entry["duration_s"] for entry in self.engine["rows"]))


def columns(reports: list[dict[str, Any]]) -> list[Column]:
    found: list[Column] = []
    for report in reports:
        for engine in report["engines"]:
            found.append(Column(f"{engine['name']} {engine['version']} ({engine['clock']})", engine, report))
    return found


def row_index(reports: list[dict[str, Any]]) -> list[tuple[str, list[str], bool]]:
    """Every row named in any report, in first-seen order, with its clauses and whether it is required."""
    seen: dict[str, tuple[list[str], bool]] = {}
    for report in reports:
        for engine in report["engines"]:
            for entry in engine["rows"]:
                seen.setdefault(entry["row"], (entry["clauses"], entry["required"]))
    return [(name, clauses, required) for name, (clauses, required) in seen.items()]


class Notes:
    """The numbered notes under a matrix: identical texts share one number."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def number(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1

    def cell(self, column: Column, entry: dict[str, Any] | None) -> list[int]:
        """Numbers for a cell: why it did not pass, then what the row noted (e.g. a leg it did not run)."""
        if entry is None:
            return []
        texts = [f"{column.engine['name']}, {entry['row']}: {note}" for note in entry["notes"]]
        if entry["outcome"] != "passed" and entry["reason"]:
            texts.insert(0, f"{column.engine['name']}, {entry['row']} {entry['outcome']}: {entry['reason']}")
        return [self.number(text) for text in texts]

    def verdict(self, column: Column) -> list[int]:
        """The certificate line, as a note: what it covers and left out, or what stood in its way."""
        return [self.number(f"{column.engine['name']}: {column.engine['certificate']}")]


def clause_index(reports: list[dict[str, Any]]) -> list[str]:
    """Every clause any report gives a verdict for, in the contract's order (first seen)."""
    seen: dict[str, None] = {}
    for report in reports:
        for engine in report["engines"]:
            for entry in engine["clauses"]:
                seen.setdefault(entry["clause"], None)
    return list(seen)


def clause_cell(column: Column, clause_id: str) -> tuple[str, str, str]:
    """(verdict, text, detail) of one clause on one engine run; ``absent`` when the report has none."""
    for entry in column.engine["clauses"]:
        if entry["clause"] == clause_id:
            verdict = str(entry["verdict"])
            gap = f" ({entry['gap']})" if entry["gap"] else ""
            checks = f" ({entry['checks']})" if verdict == "passed" else ""
            return verdict, CLAUSE_SYMBOLS[verdict] + checks + gap, entry["detail"] or ""
    return "absent", "—", ""


def _kind(required: bool) -> str:
    return "required" if required else "capability"


def _verdict(column: Column) -> str:
    return "certified" if column.certified else "not certified"


def _seconds(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def _selection(column: Column) -> str:
    """pytest's ``-k``/``-m`` of the run, or "all" (reports of format 1 written before it was recorded: "all")."""
    selection = column.report.get("selection") or {}
    asked = [f"-{flag} {selection[key]!r}" for flag, key in (("k", "keyword"), ("m", "markexpr")) if selection.get(key)]
    return " ".join(asked) or "all"


def _runs(cols: list[Column]) -> list[tuple[str, list[str]]]:
    """The facts of each run, one line per fact, in the order both renderers show them."""

    def fact(get: Any) -> list[str]:
        return [str(get(c)) for c in cols]

    return [
        ("engine", fact(lambda c: f"{c.engine['name']} {c.engine['version']} ({c.engine['spec']})")),
        ("verdict", fact(_verdict)),
        ("clock", fact(lambda c: c.engine["clock"])),
        ("capabilities", fact(lambda c: ", ".join(c.engine["capabilities"]) or "none")),
        ("unavailable", fact(lambda c: c.engine["unavailable_reason"] or "—")),
        ("storage", fact(lambda c: c.engine.get("storage") or "—")),
        ("rows asked for", fact(_selection)),
        ("suite / contract", fact(lambda c: f"{c.report['suite_version']} / {c.report['contract_version']}")),
        ("python", fact(lambda c: c.report["python"])),
        ("platform", fact(lambda c: c.report["platform"])),
        ("seed", fact(lambda c: c.report["settings"].get("seed"))),
        ("rows' time", fact(lambda c: _seconds(c.duration_s))),
        ("run at", fact(lambda c: c.report["created_at"][:19].replace("T", " ") + " UTC")),
    ]


def render_markdown(reports: list[dict[str, Any]]) -> str:
    cols = columns(reports)
    notes = Notes()
    lines = [
        "| row | clauses | kind | " + " | ".join(c.label for c in cols) + " |",
        "|---|---|---|" + "---|" * len(cols),
    ]
    for name, clauses, required in row_index(reports):
        cells = []
        for col in cols:
            entry = col.cell(name)
            marks = "".join(f" [{n}]" for n in notes.cell(col, entry))
            cells.append((SYMBOLS[entry["outcome"]] if entry else SYMBOLS["absent"]) + marks)
        lines.append(f"| `{name}` | {' '.join(clauses)} | {_kind(required)} | " + " | ".join(cells) + " |")
    verdicts = [
        ("**certified**" if c.certified else "**not certified**") + "".join(f" [{n}]" for n in notes.verdict(c))
        for c in cols
    ]
    lines.append("| **verdict** | | | " + " | ".join(verdicts) + " |")
    lines += ["", "| clause | " + " | ".join(c.label for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for clause_id in clause_index(reports):
        lines.append(f"| {clause_id} | " + " | ".join(clause_cell(c, clause_id)[1] for c in cols) + " |")
    if notes.texts:
        lines += ["", *(f"{n}. {text}" for n, text in enumerate(notes.texts, start=1))]
    lines += ["", "| run | " + " | ".join(c.label for c in cols) + " |", "|---|" + "---|" * len(cols)]
    lines += [f"| {label} | " + " | ".join(values) + " |" for label, values in _runs(cols)]
    return "\n".join(lines) + "\n"


def _marks_html(numbers: list[int]) -> str:
    return f"<sup>{','.join(str(n) for n in numbers)}</sup>" if numbers else ""


def _cell_html(col: Column, entry: dict[str, Any] | None, notes: Notes) -> str:
    outcome = entry["outcome"] if entry else "absent"
    title = html.escape((entry or {}).get("reason") or outcome, quote=True)
    shown = entry is not None and outcome != "skipped"
    duration = f"<span class='time'>{_seconds(entry['duration_s'])}</span>" if entry and shown else ""
    symbol = html.escape(HTML_SYMBOLS[outcome])
    return f"<td class='cell {outcome}' title='{title}'>{symbol}{_marks_html(notes.cell(col, entry))}{duration}</td>"


STYLE = (
    "body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:1.5rem 2rem;color:#1f2328;font-size:14px}"
    "h1{font-size:1.6rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.4rem 0 .4rem}"
    ".meta{color:#57606a;margin:0 0 1rem}"
    "table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:left;"
    "vertical-align:middle}thead th{background:#f6f8fa}"
    "th.engine{min-width:9rem}th.engine small{display:block;font-weight:normal;color:#57606a}"
    "td.clauses{max-width:22rem;color:#57606a;font-size:.85rem}td.kind{font-size:.85rem}"
    "tr.capability td.kind{font-style:italic;color:#57606a}"
    "td.cell{font-weight:600;white-space:nowrap}td.cell sup{font-weight:normal;margin-left:.15rem}"
    "td.cell .time{float:right;margin-left:.8rem;font-weight:normal;font-size:.8rem;opacity:.75}"
    "td.verdict{color:#fff;font-weight:700;text-transform:uppercase;letter-spacing:.03em}"
    ".legend span{display:inline-block;padding:.1rem .5rem;margin-right:.4rem;border-radius:3px;font-weight:600}"
    "ol.notes{margin:0;padding-left:1.6rem;color:#1f2328}ol.notes li{margin:.15rem 0}"
    "table.runs td{font-size:.85rem}"
    + "".join(f"td.{k},.legend span.{k}{{background:{bg};color:{fg}}}" for k, (bg, fg) in COLOURS.items())
)


def render_html(reports: list[dict[str, Any]]) -> str:
    cols = columns(reports)
    notes = Notes()
    head = "".join(
        f"<th class='engine'>{html.escape(c.engine['name'])}"
        f"<small>{html.escape(c.engine['version'])} · clock {html.escape(c.engine['clock'])}</small></th>"
        for c in cols
    )
    body = []
    for name, clauses, required in row_index(reports):
        cells = "".join(_cell_html(c, c.cell(name), notes) for c in cols)
        body.append(
            f"<tr class='{_kind(required)}'><th scope='row'><code>{html.escape(name)}</code></th>"
            f"<td class='clauses'>{html.escape(' '.join(clauses))}</td><td class='kind'>{_kind(required)}</td>"
            f"{cells}</tr>"
        )
    verdicts = "".join(
        f"<td class='verdict' style='background:{VERDICT_COLOURS[c.certified]}' "
        f"title='{html.escape('; '.join(c.engine['not_certified_because']), quote=True)}'>"
        f"{_verdict(c)}{_marks_html(notes.verdict(c))}</td>"
        for c in cols
    )
    legend = "".join(f"<span class='{k}'>{html.escape(HTML_SYMBOLS[k])}</span>" for k in OUTCOMES[:4])
    clause_rows = "".join(
        f"<tr><th scope='row'>{html.escape(clause_id)}</th>"
        + "".join(
            f"<td class='cell {CLAUSE_CLASSES.get(verdict, 'absent')}' title='{html.escape(detail, quote=True)}'>"
            f"{html.escape(text)}</td>"
            for verdict, text, detail in (clause_cell(c, clause_id) for c in cols)
        )
        + "</tr>"
        for clause_id in clause_index(reports)
    )
    notes_html = (
        "<h2>Notes</h2><ol class='notes'>" + "".join(f"<li>{html.escape(t)}</li>" for t in notes.texts) + "</ol>"
        if notes.texts
        else ""
    )
    runs = "".join(
        f"<tr><th scope='row'>{html.escape(label)}</th>"
        + "".join(f"<td>{html.escape(v)}</td>" for v in values)
        + "</tr>"
        for label, values in _runs(cols)
    )
    versions = sorted({f"suite {r['suite_version']}, contract {r['contract_version']}" for r in reports})
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>alkstore conformance matrix</title><style>{STYLE}</style></head><body>"
        "<h1>alkstore conformance matrix</h1>"
        f"<p class='meta'>{html.escape('; '.join(versions))} · {len(cols)} engine run(s) · an engine is certified "
        "when every clause of the core and of each capability it declares passed (docs/capabilities.md)</p>"
        f"<table class='matrix'><thead><tr><th>row</th><th>clauses</th><th>kind</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody><tfoot><tr><th scope='row'>verdict</th><td></td><td></td>{verdicts}</tr>"
        f"</tfoot></table><p class='legend'>{legend}</p>{notes_html}"
        f"<h2>Clauses</h2><table class='clauses'><thead><tr><th>clause</th>{head}</tr></thead>"
        f"<tbody>{clause_rows}</tbody></table>"
        f"<h2>Runs</h2><table class='runs'><tbody>{runs}</tbody></table>"
        "</body></html>\n"
    )
