"""The certification report: what ran, on what, with which knobs, and whether the engine is certified.

Part of the report.

The JSON follows ``report.schema.json`` (shipped in this package). Each
engine carries its certificate line, one verdict per clause of the contract,
and its rows with their legs; an engine is *certified* by the suite's rule,
and the report says what stood in the way when it is not. It also carries what the adapter declared it emulates, each
profile's verdict and the one-line summary of both.

The suite publishes all of that as ``alkstore_contract.report.model`` objects;
this module only places them in the document. ``RowResult`` and ``EngineInfo``
still import from here, as before.
"""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alkstore_contract import CONTRACT_VERSION
from alkstore_contract.report.model import EngineEntry, EngineInfo, RowResult

__all__ = [
    "SCHEMA_PATH",
    "EngineEntry",
    "EngineInfo",
    "RowResult",
    "build_report",
    "load_report",
    "write_report",
]

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def build_report(
    *,
    settings: dict[str, object],
    selection: dict[str, str],
    engines: list[EngineEntry],
    results: list[RowResult],
    unmatched_xfail: list[str],
    suite_version: str,
) -> dict[str, Any]:
    """The whole report as JSON-ready data: per engine, its certificate, its clause verdicts and its rows.

    It places what the suite published (``alkstore_contract.report.model``) and judges nothing itself.
    """
    engine_entries = []
    for entry in engines:
        info = entry.info
        rows = [r for r in results if r.engine == info.name]
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
                "certified": entry.certified,
                "certificate": entry.certificate,
                "covers": entry.covers,
                "not_exercised": entry.not_exercised,
                "not_certified_because": entry.not_certified_because,
                "clauses": entry.clauses,
                "emulates": info.emulates,
                "profiles": entry.profiles,
                "summary": entry.summary,
                "known_differences_only": entry.known_differences_only,
                "rows": [r.as_json() for r in rows],
            }
        )
    return {
        "report_format": 2,
        "suite_version": suite_version,
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
