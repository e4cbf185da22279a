"""The results table of docs/runtime-faults.md, rebuilt from the committed reports (docs/runtime-faults/*.json).

One row per fault, one column per library; a cell gives each non-zero outcome's count in every run of that fault
(``lost 1·0·1``: three runs), in words a reader can tell apart (``LABELS``: "failed by policy
(WorkerSettings.job_timeout)", "final state not read", "concurrent (one stopped)"), or ``0`` when every run was
clean, and the median recovery delay. Below the table,
per library, what its docs say beside what was observed, and a command that replays each run with a non-zero
count. ``python -m alkstore_faults.table`` rewrites the part of the page between its markers; ``--check``
writes nothing and exits 1 when the page disagrees with the reports.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alkstore_faults.promises import KEYS, judged, normalised
from alkstore_faults.runner_program import FAULTS

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "docs" / "runtime-faults"
PAGE = ROOT / "docs" / "runtime-faults.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


LABELS = {
    "failed_by_policy": "failed by policy",
    "failed_unexplained": "failed, no declared policy",
    "recovers_later": "not recovered within the run",
    "still_queued": "still queued",
    "unread": "final state not read",
    "concurrent_executing": "concurrent (both executing)",
    "concurrent_stopped": "concurrent (one stopped)",
    "concurrent": "concurrent (not split)",
}
"""How a cell names an outcome; the others are named as the checker names them."""


def _label(outcome: str, runs: list[dict[str, Any]]) -> str:
    """The outcome's words, with its causes (a policy's setting, a recovery rule's delay) when findings give any."""
    causes = sorted(
        {
            str(finding["cause"])
            for run in runs
            for finding in run.get("findings", [])
            if finding["outcome"] == outcome and finding.get("cause")
        }
    )
    label = LABELS.get(outcome, outcome)
    return f"{label} ({'; '.join(causes)})" if causes else label


def _cell(runs: list[dict[str, Any]], version: int = 2) -> str:
    if not runs:
        return "not taken"
    if any(run["counts"]["lost"] is None for run in runs):
        return f"NOT RUN in {sum(run['counts']['lost'] is None for run in runs)} of {len(runs)}"
    counts = [normalised(run["counts"], version) for run in runs]
    shown = [
        f"{_label(outcome, runs)} {'·'.join(str(count[outcome] or 0) for count in counts)}"
        for outcome in KEYS
        if any(count[outcome] for count in counts)
    ]
    medians = [run["recovery_delay_s"]["median"] for run in runs if run["recovery_delay_s"]["median"] is not None]
    delay = f"; restart {statistics.median(medians):.1f} s" if medians else ""
    exits = [len(run.get("restarts", [])) for run in runs]
    exited = f"; workers exited {'·'.join(map(str, exits))}" if any(exits) else ""
    return (", ".join(shown) or "0") + delay + exited


def _promise_line(promise: dict[str, Any], all_runs: list[dict[str, Any]], version: int = 2) -> str:
    """What a promise or caveat says beside what was observed, held as alkstore_faults.promises says."""
    runs = [run for run in all_runs if "*" in promise["faults"] or run["fault"] in promise["faults"]]
    is_promise = promise["max"] is not None
    held = [judged(promise["outcome"], run["counts"], promise=is_promise, version=version) for run in runs]
    observed = sum(count or 0 for count, _ in held)
    unjudged = sum(unseen for _, unseen in held)
    what = promise["outcome"]
    if what == "stale":
        refused = sum(normalised(run["counts"], version)["stale_refused"] or 0 for run in runs)
        what = "stale (accepted)" if is_promise else "stale (accepted or unobserved)"
        not_judged = f", NOT JUDGED in {unjudged} (unobserved)" if unjudged else ""
        observed_text = f"{observed}, refused {refused}{not_judged}"
    elif what == "lost" and unjudged:
        observed_text = f"{observed}, NOT JUDGED in {unjudged} (final state not read)"
    elif what == "lost" and not is_promise:
        observed_text = f"{observed} (lost or final state not read)"
    elif what == "concurrent":
        observed_text = f"{observed} ({'both executing' if is_promise else 'executing or with one stopped'})"
    else:
        observed_text = str(observed)
    return promise_sentence(promise, what, observed_text, len(runs))


def promise_sentence(promise: dict[str, Any], what: str, observed: str, runs: int) -> str:
    """A promise's or caveat's line of the page: its limit, ``what`` it is about, what ``runs`` runs showed
    (``observed``), and the docs' words. The jobs and the schedule tables say each the same way."""
    kind = f"promise (≤ {promise['max']})" if promise["max"] is not None else "caveat"
    return (
        f"- {kind}, {what} under {', '.join(promise['faults'])}: observed {observed} in {runs} runs. "
        f"The docs: “{promise['quote']}” ({promise['doc']})"
    )


def fault_grid(
    reports: list[dict[str, Any]],
    faults: tuple[str, ...],
    heading: Callable[[dict[str, Any]], str],
    cell: Callable[[dict[str, Any], list[dict[str, Any]]], str],
) -> list[str]:
    """The table's lines: a column per report (``heading`` it), a row per fault some report took, each cell what
    ``cell`` says of that report's runs of the fault ("not taken" where it has none)."""
    lines = ["| fault | " + " | ".join(heading(r) for r in reports) + " |", "|---|" + "---|" * len(reports)]
    for fault in faults:
        cells = [cell(r, [run for run in r["runs"] if run["fault"] == fault]) for r in reports]
        if any(text != "not taken" for text in cells):
            lines.append(f"| {fault} | " + " | ".join(cells) + " |")
    return lines


def render(reports: list[dict[str, Any]]) -> str:
    """The Markdown between the page's markers, from ``reports`` (one per library)."""
    reports = sorted(reports, key=lambda report: str(report["runner"]))
    lines = fault_grid(
        reports, FAULTS, lambda r: f"{r['runner']} ({r['language']})", lambda r, runs: _cell(runs, r["version"])
    )
    lines += [
        "",
        "Versions, settings and seeds: "
        + "; ".join(
            f"{r['runner']}: {r['library_version']}, lease {r['lease_s']} s, window {r['recovery_window_s']} s, "
            f"seed {r['seed']} ([report](runtime-faults/{r['runner']}.json))"
            for r in reports
        )
        + ".",
    ]
    for report in reports:
        lines += ["", f"**{report['runner']}**"]
        for promise in [*report["promises"], *report["caveats"]]:
            lines.append(_promise_line(promise, report["runs"], report["version"]))
        for fault in FAULTS:
            hit = [
                run
                for run in report["runs"]
                if run["fault"] == fault
                and run["counts"]["lost"] is not None
                and any(normalised(run["counts"], report["version"]).values())
            ]
            if hit:
                rounds = ", ".join(str(run["round"]) for run in hit)
                replay = str(hit[0]["replay"]).rsplit(" --round ", 1)[0] + " --round R"
                lines.append(f"- reproduce {fault} (round R = {rounds}): `{replay}`")
    return "\n".join(lines)


def load(directory: Path = REPORTS) -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(directory.glob("*.json"))]


def main(argv: list[str] | None = None) -> int:
    stale = "docs/runtime-faults.md disagrees with docs/runtime-faults/*.json: rerun python -m alkstore_faults.table"
    return table_main(argv, __doc__, (START, END), render, REPORTS, stale)


def table_main(
    argv: list[str] | None,
    doc: str | None,
    markers: tuple[str, str],
    render: Callable[[list[dict[str, Any]]], str],
    directory: Path,
    stale: str,
) -> int:
    """The command of a table on docs/runtime-faults.md (the jobs table, the schedule table): ``render`` the
    reports in ``directory`` between the page's ``markers``, or with ``--check`` write nothing and exit 1 saying
    ``stale`` when the page disagrees."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is stale")
    args = parser.parse_args(argv)
    return rewrite_block(*markers, render(load(directory)), check=args.check, stale=stale)


def rewrite_block(start: str, end: str, rendered: str, *, check: bool, stale: str) -> int:
    """Put ``rendered`` between the page's ``start`` and ``end`` markers (``write_or_check``)."""
    page = PAGE.read_text(encoding="utf-8")
    head, rest = page.split(start, 1)
    _, tail = rest.split(end, 1)
    return write_or_check(PAGE, page, f"{head}{start}\n{rendered}\n{end}{tail}", check=check, stale=stale)


def write_or_check(path: Path, page: str, fresh: str, *, check: bool, stale: str) -> int:
    """Write ``fresh`` over ``page`` at ``path``, or (``check``) write nothing and exit 1 with ``stale`` on stderr
    when the two differ: how every generated block of a page is rebuilt and held to its sources."""
    if check:
        if fresh != page:
            sys.stderr.write(stale + "\n")
            return 1
        return 0
    path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
