"""The certification report: what ran, on what, with which knobs, and whether the engine is certified.

The JSON follows ``report.schema.json`` (shipped in this package). An engine
is *certified* when every required row passed on it; the report says which
rows stood in the way when it is not.
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alkstore_contract import CONTRACT_VERSION
from alkstore_contract.suite import SUITE_VERSION

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
OUTCOMES = ("passed", "failed", "skipped", "xfailed")


@dataclass
class RowResult:
    """One row on one engine."""

    row: str
    engine: str
    clauses: list[str]
    required: bool
    outcome: str = "passed"
    reason: str | None = None
    duration_s: float = 0.0
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "clauses": self.clauses,
            "required": self.required,
            "outcome": self.outcome,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 4),
            "seed": self.seed,
            "notes": self.notes,
        }


@dataclass
class EngineInfo:
    """Who an engine is, as the run saw it."""

    name: str
    spec: str
    version: str
    capabilities: list[str]
    clock: str
    unavailable_reason: str | None = None
    storage: str | None = None
    """What the engine stores into, as its adapter's optional ``storage_version()`` said."""


def certification(results: list[RowResult], required_rows: list[str]) -> tuple[bool, list[str]]:
    """Certified iff every required row ran and passed; otherwise the reasons, one per row in the way.

    A required row that did not run at all (deselected with ``-k``, say) stands
    in the way too: a partial run never certifies.
    """
    ran = {r.row for r in results}
    blockers = [f"required row {name} did not run" for name in required_rows if name not in ran]
    blockers += [
        f"required row {r.row} {r.outcome}" + (f": {r.reason}" if r.reason else "")
        for r in results
        if r.required and r.outcome != "passed"
    ]
    return not blockers, blockers


def build_report(
    *,
    settings: dict[str, object],
    selection: dict[str, str],
    engines: list[EngineInfo],
    results: list[RowResult],
    required_rows: list[str],
    unmatched_xfail: list[str],
) -> dict[str, Any]:
    """The whole report as JSON-ready data."""
    engine_entries = []
    for info in engines:
        rows = [r for r in results if r.engine == info.name]
        certified, blockers = certification(rows, required_rows)
        engine_entries.append(
            {
                "name": info.name,
                "spec": info.spec,
                "version": info.version,
                "capabilities": info.capabilities,
                "clock": info.clock,
                "unavailable_reason": info.unavailable_reason,
                "storage": info.storage,
                "certified": certified,
                "not_certified_because": blockers,
                "rows": [r.as_json() for r in rows],
            }
        )
    return {
        "report_format": 1,
        "suite_version": SUITE_VERSION,
        "contract_version": CONTRACT_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "settings": settings,
        "selection": selection,
        "unmatched_xfail_entries": unmatched_xfail,
        "engines": engine_entries,
    }


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def load_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
