"""The conformance matrix (rows × engines) of one or more JSON reports, as HTML or Markdown.

The HTML is one self-contained page (inline CSS, no script, no external
asset) so it can be attached to a release or opened from a CI artifact.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

COLOURS = {"passed": "#1a7f37", "failed": "#cf222e", "skipped": "#9a6700", "xfailed": "#8250df", "absent": "#6e7781"}
SYMBOLS = {"passed": "✅ passed", "failed": "❌ failed", "skipped": "⏭ skipped", "xfailed": "⚠ xfailed", "absent": "—"}


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


def render_markdown(reports: list[dict[str, Any]]) -> str:
    cols = columns(reports)
    lines = [
        "| row | clauses | kind | " + " | ".join(c.label for c in cols) + " |",
        "|---|---|---|" + "---|" * len(cols),
    ]
    for name, clauses, required in row_index(reports):
        cells = []
        for col in cols:
            entry = col.cell(name)
            cells.append(SYMBOLS[entry["outcome"]] if entry else SYMBOLS["absent"])
        kind = "required" if required else "capability"
        lines.append(f"| `{name}` | {' '.join(clauses)} | {kind} | " + " | ".join(cells) + " |")
    verdicts = ["**certified**" if c.engine["certified"] else "not certified" for c in cols]
    lines.append("| **verdict** | | | " + " | ".join(verdicts) + " |")
    return "\n".join(lines) + "\n"


def _cell_html(entry: dict[str, Any] | None) -> str:
    outcome = entry["outcome"] if entry else "absent"
    title = html.escape((entry or {}).get("reason") or outcome, quote=True)
    return f'<td class="{outcome}" title="{title}">{html.escape(SYMBOLS[outcome])}</td>'


def render_html(reports: list[dict[str, Any]]) -> str:
    cols = columns(reports)
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in cols)
    body = []
    for name, clauses, required in row_index(reports):
        kind = "required" if required else "capability"
        cells = "".join(_cell_html(c.cell(name)) for c in cols)
        body.append(
            f"<tr><th scope='row'><code>{html.escape(name)}</code></th>"
            f"<td>{html.escape(' '.join(clauses))}</td><td>{kind}</td>{cells}</tr>"
        )
    verdicts = "".join(
        f"<td class='{'passed' if c.engine['certified'] else 'failed'}' "
        f"title='{html.escape('; '.join(c.engine['not_certified_because']), quote=True)}'>"
        f"{'certified' if c.engine['certified'] else 'not certified'}</td>"
        for c in cols
    )
    styles = "".join(f"td.{k}{{background:{v};color:#fff}}" for k, v in COLOURS.items())
    versions = sorted({f"suite {r['suite_version']}, contract {r['contract_version']}" for r in reports})
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>alkstore conformance matrix</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
        "th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left}"
        f"{styles}</style></head><body><h1>alkstore conformance matrix</h1>"
        f"<p>{html.escape('; '.join(versions))}</p>"
        f"<table><thead><tr><th>row</th><th>clauses</th><th>kind</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}<tr><th scope='row'>verdict</th><td></td><td></td>{verdicts}</tr></tbody>"
        "</table></body></html>\n"
    )
