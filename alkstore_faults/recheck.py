"""Re-judge committed reports without re-running them: what their ledgers and pause logs still say.

A report keeps every run of a handler (its ``ledger``: job, worker, start, end) and every fault the harness
struck (``events``: a pause's worker, from ``at`` to ``until``). That is all the checker needs to tell an overlap
of two runs while both executed from one while the harness had one of them stopped, so a report written before
that split (its counts say ``concurrent``) is split here, each finding by ``checker.overlap_kind``, as the checker
splits a new run's. What a report does not keep cannot be recomputed: the library's own final state of each job
was never read (a version-1 report's jobs no run completed stay ``unread``, "final state not read"), and no
``cancelled`` record was written. ``python -m alkstore_faults.recheck [REPORT ...]`` rewrites the reports in
place (default: docs/runtime-faults/*.json) and says, per report, what it split and what only a new run can
tell; ``--check`` writes nothing and exits 1 when a report is not split yet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from alkstore_faults.checker import CONCURRENT, FaultEvent, overlap_kind
from alkstore_faults.table import REPORTS

RECHECKED = "concurrent split from the ledger and the pause log by alkstore_faults.recheck"


def _second_end(run: dict[str, Any], job: str, worker: str, start: float, first_end: float) -> float:
    """When the second run of an overlap stopped: its ledger end, or (it never ended) the first run's end, as
    far as the finding can tell."""
    for entry in run["ledger"]:
        if entry[0] == job and entry[1] == worker and abs(float(entry[3]) - start) < 0.002:
            return first_end if entry[4] is None else float(entry[4])
    return first_end


def split_run(run: dict[str, Any]) -> int:
    """Split the run's ``concurrent`` findings and counts in place; how many findings it split."""
    faults = [
        FaultEvent(event["kind"], float(event["at"]), float(event["until"]), event["worker"]) for event in run["events"]
    ]
    split = 0
    for finding in run["findings"]:
        if finding["outcome"] != "concurrent":
            continue
        (first, second), (first_start, second_start, first_end) = finding["workers"], finding["times"]
        second_end = _second_end(run, finding["job"], second, second_start, first_end)
        outcome, both = overlap_kind((first, first_start, first_end), (second, second_start, second_end), faults)
        finding["outcome"] = outcome
        finding["detail"] += f"; both executing {both:.3f} s (rechecked from the ledger and the pause log)"
        split += 1
    counts = run["counts"]
    if "concurrent" in counts:
        was = counts.pop("concurrent")
        for outcome in CONCURRENT:
            counts[outcome] = None if was is None else sum(f["outcome"] == outcome for f in run["findings"])
    return split


def recheck(report: dict[str, Any]) -> list[str]:
    """Split every run of ``report`` in place; the lines saying what was split and what only a re-run can tell."""
    if report.get("rechecked") == RECHECKED or all("concurrent" not in run["counts"] for run in report["runs"]):
        return []
    split = sum(split_run(run) for run in report["runs"])
    report["rechecked"] = RECHECKED
    lines = [f"{report['runner']}: split {split} concurrent finding(s) by the pause log"]
    unread = sum(run["counts"]["lost"] or 0 for run in report["runs"])
    if report["version"] < 2 and unread:
        lines.append(
            f"{report['runner']}: {unread} job(s) no run completed stay 'final state not read' (protocol 1: the "
            "library's final state was never read); only a re-run with inspect can class them"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path, help="reports to re-judge (default: docs/runtime-faults/)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a report is not split")
    args = parser.parse_args(argv)
    stale = False
    for path in args.reports or sorted(REPORTS.glob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        lines = recheck(report)
        stale = stale or bool(lines)
        for line in lines:
            sys.stdout.write(line + "\n")
        if lines and not args.check:
            path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
