"""The sentences both pages say about the runtime-faults runs, worked out from the committed reports.

``python -m tools.faults_claims`` (from the repository's root) rewrites the block of docs/runtime-faults.md
between ``<!-- claims:start -->`` and ``<!-- claims:end -->``; ``--check`` writes nothing and exits 1 when the
block disagrees with the reports (``tests/test_page_claims.py`` runs it). ``tools/ecosystem_page.py`` takes its
runtime-faults sentences from here too, so a sentence of the form "in every run" or "in no run" on either page
is counted from the reports, never typed.

What it says, per fault: which runners showed each outcome in every run of it, in some, and in none, with the
runners that did not take the fault named apart; then every count a quoted promise forbids (*breaks its own
promise*, each with its standalone reproduction, from ``ecosystem/faults-reproductions.json``, or the reason it
has none yet), every count a quoted caveat explains (*documented*), and every other non-zero count (*no doc
quoted*).

A tool of the project's checkout, like ``alkstore_faults.table``, whose results block sits above this one.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alkstore_faults.checker import OUTCOMES as CHECKED
from alkstore_faults.promises import judged, normalised
from alkstore_faults.runner_program import FAULTS
from alkstore_faults.table import load, write_or_check

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "runtime-faults.md"
REPORTS = ROOT / "docs" / "runtime-faults"
REPRODUCTIONS = ROOT / "ecosystem" / "faults-reproductions.json"
START, END = "<!-- claims:start -->", "<!-- claims:end -->"
COMMAND = "python -m tools.faults_claims"

WORDS = {
    "lost": "lost a job",
    "failed_by_policy": "failed a job by a documented policy",
    "failed_unexplained": "failed a job with no documented policy for it",
    "recovers_later": "held a job for a documented recovery after the run",
    "still_queued": "left a job queued",
    "unread": "left a job whose final state was not read",
    "twice": "ran a job twice",
    "concurrent": "ran a job in two workers at once",
    "concurrent_executing": "ran a job in two executing workers at once",
    "concurrent_stopped": "overlapped two runs of a job while one worker was stopped",
    "stale_refused": "refused a late completion",
    "stale_accepted": "took a late completion",
    "cancelled": "cancelled a run",
}
"""The outcomes the summary says in words; an outcome the checker counts that is not here is named as it is."""
UNREAD_HIDES = frozenset({"lost", "failed_by_policy", "failed_unexplained", "recovers_later", "still_queued"})
"""The classes a job not completed falls in once its final state is read: a job left unread may be any of them."""
OUTCOMES = tuple(normalised(dict.fromkeys(CHECKED, 0)))
"""Every count a report's run has once ``normalised``: the checker's outcomes (and whatever an older report's
reading adds)."""
SUMMED = tuple(o for o in OUTCOMES if o != "stale_unobserved")
"""The outcomes the per-fault summary counts: every one the checker has, but a late completion no runner saw."""
KINDS: tuple[tuple[str, str], ...] = (
    ("breaks its own promise", "Counts a quoted promise forbids (*breaks its own promise*)"),
    ("kept", "Counts a quoted promise foresees (a fence refusing a late completion)"),
    ("documented", "Counts a quoted caveat explains (*documented*)"),
    ("no doc quoted", "Counts no quoted doc speaks of"),
)


@dataclass(frozen=True, slots=True)
class Count:
    """One outcome of one runner under one fault: its count in each run, and what the runner's docs say of it."""

    runner: str
    fault: str
    outcome: str
    counts: tuple[int, ...]
    kind: str
    """One of ``KINDS``: ``breaks its own promise``, ``kept``, ``documented`` or ``no doc quoted``."""
    quote: str | None
    doc: str | None

    @property
    def shown(self) -> str:
        return "·".join(map(str, self.counts))


def _count(run: dict[str, Any], outcome: str, version: int) -> int:
    """A run's count of ``outcome``, its report's counts read as ``alkstore_faults.promises`` reads a report of
    that ``version``."""
    return int(normalised(run["counts"], version).get(outcome) or 0)


def _runs(report: dict[str, Any], fault: str) -> list[dict[str, Any]]:
    return [run for run in report["runs"] if run["fault"] == fault and run["counts"].get("lost") is not None]


def _covers(entry: dict[str, Any], outcome: str, fault: str) -> bool:
    """A promise or caveat about ``outcome`` under ``fault``; one about an outcome the checker splits covers each
    part (``stale`` covers ``stale_refused``, ``concurrent`` a ``concurrent_…`` split)."""
    about = entry["outcome"]
    same = about == outcome or outcome.startswith(f"{about}_")
    return same and ("*" in entry["faults"] or fault in entry["faults"])


def counts(reports: list[dict[str, Any]]) -> list[Count]:
    """Every non-zero outcome of every runner under every fault it took, classed by what its docs say."""
    found = []
    for report in sorted(reports, key=lambda r: str(r["runner"])):
        for fault in FAULTS:
            runs = _runs(report, fault)
            for outcome in OUTCOMES:
                per_run = tuple(_count(run, outcome, report["version"]) for run in runs)
                if not any(per_run):
                    continue
                found.append(_classed(report, fault, outcome, per_run, runs))
    return found


def _classed(report: dict[str, Any], fault: str, outcome: str, per_run: tuple[int, ...], runs: list[Any]) -> Count:
    for promise in report["promises"]:
        if _covers(promise, outcome, fault):
            held = [
                judged(promise["outcome"], run["counts"], promise=True, version=report["version"])[0] or 0
                for run in runs
            ]
            kind = "breaks its own promise" if any(n > promise["max"] for n in held) else "kept"
            return Count(report["runner"], fault, outcome, per_run, kind, promise["quote"], promise["doc"])
    for caveat in report["caveats"]:
        if _covers(caveat, outcome, fault):
            return Count(report["runner"], fault, outcome, per_run, "documented", caveat["quote"], caveat["doc"])
    return Count(report["runner"], fault, outcome, per_run, "no doc quoted", None, None)


def _names(runners: list[str]) -> str:
    return ", ".join(runners) if runners else "none"


def pattern(reports: list[dict[str, Any]], fault: str, outcome: str) -> dict[str, list[str]]:
    """The runners that took ``fault`` by how often ``outcome`` showed: ``every``, ``some`` and ``none`` of their
    runs; ``not taken``: the runners that did not take it; ``not read``: those that showed no ``outcome`` but left a
    job whose final state was not read, which may be one (a class of ``UNREAD_HIDES``)."""
    grouped: dict[str, list[str]] = {"every": [], "some": [], "none": [], "not taken": [], "not read": []}
    for report in sorted(reports, key=lambda r: str(r["runner"])):
        runs = _runs(report, fault)
        if not runs:
            grouped["not taken"].append(report["runner"])
            continue
        seen = [bool(_count(run, outcome, report["version"])) for run in runs]
        if not any(seen) and outcome in UNREAD_HIDES and any(_count(run, "unread", report["version"]) for run in runs):
            grouped["not read"].append(report["runner"])  # a job whose final state no one read may be this
            continue
        grouped["every" if all(seen) else "some" if any(seen) else "none"].append(report["runner"])
    return grouped


def _counted(reports: list[dict[str, Any]], fault: str, outcome: str) -> bool:
    """Whether some report counts ``outcome`` under ``fault`` at all: a count no report keeps (``concurrent`` once
    every report splits it, ``cancelled`` before the checker counted it) says nothing either way, so no sentence."""
    return any(
        normalised(run["counts"], report["version"]).get(outcome) is not None
        for report in reports
        for run in _runs(report, fault)
    )


def fault_sentence(reports: list[dict[str, Any]], fault: str) -> str | None:
    """``kill9`` (taken by 12 of 13 runners): lost a job in every run: …; in some: …; in none: …"""
    taken = pattern(reports, fault, "lost")
    took = len(reports) - len(taken["not taken"])
    if not took:
        return None
    parts = []
    for outcome in SUMMED:
        if not _counted(reports, fault, outcome):
            continue
        words = WORDS.get(outcome, f"showed {outcome}")
        grouped = pattern(reports, fault, outcome)
        unread = f" (final state not read: {_names(grouped['not read'])})" if grouped["not read"] else ""
        if not grouped["every"] and not grouped["some"]:
            parts.append(f"no runner {words}{unread}")
            continue
        some = f"; in some: {_names(grouped['some'])}" if grouped["some"] else ""
        parts.append(
            f"{words} in every run: {_names(grouped['every'])}{some}; in none: {_names(grouped['none'])}{unread}"
        )
    aside = f"; not taken by {_names(taken['not taken'])}" if taken["not taken"] else ""
    return f"- `{fault}` (taken by {took} of {len(reports)} runners{aside}): " + ". ".join(parts) + "."


def outcome_sentence(reports: list[dict[str, Any]], outcome: str, words: str) -> str:
    """Which runners showed ``outcome`` under which fault (in every run or in some), and what their docs say of it."""
    shown = []
    for fault in FAULTS:
        grouped = pattern(reports, fault, outcome)
        if grouped["every"]:
            shown.append(f"under `{fault}` in every run: {_names(grouped['every'])}")
        if grouped["some"]:
            shown.append(f"under `{fault}` in some runs: {_names(grouped['some'])}")
    if not shown:
        return f"No runner {words} under any fault."
    found = [c for c in counts(reports) if c.outcome == outcome]
    said = [
        f"{kind}: {', '.join(sorted({f'{c.runner} ({c.fault})' for c in found if c.kind == kind}))}"
        for kind, _ in KINDS
        if any(c.kind == kind for c in found)
    ]
    return f"{words[0].upper()}{words[1:]} {'; '.join(shown)} (by the runners' quoted docs, {'; '.join(said)})."


def nonzero_cells(reports: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every (runner, fault) with a non-zero count in some run: a cell of the results table that names its replay."""
    return sorted({(c.runner, c.fault) for c in counts(reports)})


def replay_sentence(reports: list[dict[str, Any]]) -> str:
    cells = nonzero_cells(reports)
    return (
        f"{len(cells)} cells there have a non-zero count, each listed with the `alkstore faults` command that "
        "replays its runs."
    )


def load_reproductions(path: Path = REPRODUCTIONS) -> list[dict[str, Any]]:
    """Per broken promise (``runner``, ``outcome``, ``fault``): its standalone ``file`` and ``command``, or
    ``missing``: why it has none yet."""
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["reproductions"]
    return data


def reproduction_of(found: Count, reproductions: list[dict[str, Any]]) -> dict[str, Any] | None:
    for entry in reproductions:
        if (entry["runner"], entry["outcome"], entry["fault"]) == (found.runner, found.outcome, found.fault):
            return entry
    return None


def _count_line(found: Count, reproductions: list[dict[str, Any]]) -> str:
    said = f" (“{found.quote}”, {found.doc})" if found.quote else ""
    line = f"- {found.runner}, `{found.fault}`: {found.outcome} {found.shown}{said}"
    if found.kind != "breaks its own promise":
        return line
    entry = reproduction_of(found, reproductions)
    if entry is None:
        return line + "; standalone reproduction: NONE LISTED"
    if "missing" in entry:
        return line + f"; no standalone reproduction yet: {entry['missing']}"
    return line + f"; standalone reproduction: `{entry['command']}` ({entry['scenario']})"


def render(reports: list[dict[str, Any]], reproductions: list[dict[str, Any]]) -> str:
    """The Markdown between the page's claims markers."""
    lines = [
        f"Counted by `{COMMAND}` from the reports above ({len(reports)} runners, three runs of each fault): "
        "for each fault, the runners that showed each outcome in every run, in some and in none.",
        "",
    ]
    lines += [s for fault in FAULTS if (s := fault_sentence(reports, fault))]
    found = counts(reports)
    for kind, heading in KINDS:
        these = [c for c in found if c.kind == kind]
        lines += ["", f"{heading}: {len(these)}."]
        if these:
            lines += [""] + [_count_line(c, reproductions) for c in these]
    return "\n".join(lines)


def _splice(page: str, block: str) -> str:
    head, start, rest = page.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{PAGE}: the markers {START} and {END} are missing")
    return f"{head}{START}\n{block}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the claims block of docs/runtime-faults.md, or (``--check``) exit 1 when it is stale."""
    top = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0] if __doc__ else None)
    top.add_argument("--check", action="store_true", help="write nothing; exit 1 when the block is stale")
    args = top.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    try:
        wanted = _splice(page, render(load(REPORTS), load_reproductions()))
    except ValueError as exc:
        sys.stderr.write(f"{COMMAND}: {exc}\n")
        return 2
    stale = f"{COMMAND}: {PAGE} disagrees with the reports in {REPORTS}; rebuild with {COMMAND}"
    return write_or_check(PAGE, page, wanted, check=args.check, stale=stale)


if __name__ == "__main__":
    sys.exit(main())
