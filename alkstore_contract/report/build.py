"""The certification report: what ran, on what, with which knobs, and whether the engine is certified.

Part of the report.

The JSON follows ``report.schema.json`` (shipped in this package). Each
engine carries its certificate line, one verdict per clause of the contract,
and its rows with their legs; an engine is *certified* by the rule of
``alkstore_contract.suite.verdicts`` and the report says what stood in the way when
it is not. It also carries what the adapter declared it emulates, each
profile's verdict (``alkstore_contract.suite.profiles``) and the one-line
summary of both.
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
from alkstore_contract.adapter import Capability
from alkstore_contract.suite.profiles import profile_verdicts, summary_line
from alkstore_contract.suite.row import SUITE_VERSION
from alkstore_contract.suite.verdicts import EngineVerdict

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


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
    legs: list[str] = field(default_factory=list)
    """``name: status`` of each leg the row ran or left out."""

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
            "legs": self.legs,
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
    time_resolution_us: int = 1
    """How finely the engine keeps instants, as its adapter's optional ``time_resolution_us`` says."""
    emulates: dict[str, str] = field(default_factory=dict)
    """What the adapter built for the engine, clause by clause (its optional ``emulates``)."""


def build_report(
    *,
    settings: dict[str, object],
    selection: dict[str, str],
    engines: list[tuple[EngineInfo, EngineVerdict, str]],
    results: list[RowResult],
    unmatched_xfail: list[str],
) -> dict[str, Any]:
    """The whole report as JSON-ready data: per engine, its certificate, its clause verdicts and its rows."""
    engine_entries = []
    for info, verdict, clock in engines:
        rows = [r for r in results if r.engine == info.name]
        certificate = verdict.certificate
        capabilities = frozenset(Capability(c) for c in info.capabilities)
        engine_entries.append(
            {
                "name": info.name,
                "spec": info.spec,
                "version": info.version,
                "capabilities": info.capabilities,
                "clock": info.clock,
                "unavailable_reason": info.unavailable_reason,
                "storage": info.storage,
                "time_resolution_us": info.time_resolution_us,
                "certified": certificate is not None and certificate.certified,
                "certificate": verdict.line_for(clock, info.time_resolution_us),
                "covers": certificate.covers if certificate is not None else [],
                "not_exercised": certificate.not_exercised if certificate is not None else [],
                "not_certified_because": verdict.not_certified_because,
                "clauses": [found.as_json() for found in verdict.clauses.values()],
                "emulates": info.emulates,
                "profiles": [p.as_json() for p in profile_verdicts(verdict.clauses, capabilities).values()],
                "summary": summary_line(verdict, capabilities),
                "known_differences_only": certificate is not None and certificate.expected_only,
                "rows": [r.as_json() for r in rows],
            }
        )
    return {
        "report_format": 2,
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
