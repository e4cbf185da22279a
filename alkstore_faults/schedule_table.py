"""The schedule workload's table on docs/runtime-faults.md, rebuilt from the committed reports
(docs/runtime-faults/schedule/*.json): one row per fault, one column per runner, each cell the ticks fired twice
and the ticks missed in every run of that fault (``twice 0·0·0, missed 1·0·0``; ``skipped`` when a documented
skip explained some), of how many ticks; below it, per runner, what its docs say beside what was observed.

``python -m alkstore_faults.schedule_table`` rewrites the part of the page between its markers; ``--check``
writes nothing and exits 1 when the page disagrees with the reports.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from alkstore_faults.schedule_spec import SCHEDULE_FAULTS
from alkstore_faults.table import fault_grid, promise_sentence, table_main

REPORTS = Path(__file__).resolve().parents[1] / "docs" / "runtime-faults" / "schedule"
START, END = "<!-- schedule:start -->", "<!-- schedule:end -->"


def _cell(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return "not taken"
    if any(run["counts"]["ticks"] is None for run in runs):
        return f"NOT RUN in {sum(run['counts']['ticks'] is None for run in runs)} of {len(runs)}"
    counts = [run["counts"] for run in runs]
    parts = [
        f"{label} {'·'.join(str(count[key]) for count in counts)}"
        for key, label in (("tick_twice", "twice"), ("tick_missed", "missed"), ("tick_skipped", "skipped"))
        if key != "tick_skipped" or any(count[key] for count in counts)
    ]
    exits = [len(run.get("restarts", [])) for run in runs]
    exited = f"; workers exited {'·'.join(map(str, exits))}" if any(exits) else ""
    return ", ".join(parts) + f" (of {'·'.join(str(count['ticks']) for count in counts)} ticks){exited}"


def _promise_line(promise: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    mine = [run for run in runs if run["counts"]["ticks"] is not None]
    mine = [run for run in mine if "*" in promise["faults"] or run["fault"] in promise["faults"]]
    observed = sum(run["counts"][promise["outcome"]] for run in mine)
    return promise_sentence(promise, promise["outcome"].replace("tick_", "ticks "), str(observed), len(mine))


def render(reports: list[dict[str, Any]]) -> str:
    reports = sorted(reports, key=lambda report: str(report["runner"]))
    lines = fault_grid(
        reports,
        SCHEDULE_FAULTS,
        lambda r: f"{r['runner']} ({r['schedule']['schedulers']} scheduler)",
        lambda _, runs: _cell(runs),
    )
    lines += [
        "",
        "Versions and seeds: "
        + "; ".join(
            f"{r['runner']}: {r['library_version']}, seed {r['seed']} "
            f"([report](runtime-faults/schedule/{r['runner']}.json))"
            for r in reports
        )
        + ".",
    ]
    for report in reports:
        spec = report["schedule"]
        lines += ["", f"**{report['runner']}** ({spec['ticks']} ticks, {spec['schedulers']} scheduler)"]
        for promise in [*spec["promises"], *spec["caveats"]]:
            lines.append(_promise_line(promise, report["runs"]))
        for skip in spec["skips"]:
            lines.append(f"- documented skip, while {skip['when']}: “{skip['quote']}” ({skip['doc']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    stale = (
        "docs/runtime-faults.md disagrees with docs/runtime-faults/schedule/*.json: rerun "
        "python -m alkstore_faults.schedule_table"
    )
    return table_main(argv, __doc__, (START, END), render, REPORTS, stale)


if __name__ == "__main__":
    sys.exit(main())
