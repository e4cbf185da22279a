"""docs/runtime-faults.md's results agree with the committed runtime-faults reports, and each report is valid.

A report edited by hand, or a page not rebuilt after a new run, fails here; so does a report its schema refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_faults import table
from alkstore_faults.promises import normalised
from alkstore_faults.recheck import main as recheck_main
from alkstore_faults.recheck import recheck
from alkstore_faults.report import SCHEMA

REPORTS = sorted(table.REPORTS.glob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=lambda path: path.stem)
def test_a_committed_report_is_valid_and_ran_every_fault_three_times(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    faults = {run["fault"] for run in report["runs"]}
    assert all(sum(run["fault"] == fault for run in report["runs"]) == 3 for fault in faults), path


def test_the_page_agrees_with_the_reports() -> None:
    assert REPORTS, "no committed runtime-faults report"
    assert table.main(["--check"]) == 0, "rerun python -m alkstore_faults.table"


def test_a_cell_shows_each_outcome_per_run_and_a_clean_fault_as_zero() -> None:
    def run(lost: int | None, twice: int, delay: float | None) -> dict[str, object]:
        counts = {"lost": lost, "twice": twice, "concurrent": 0, "stale": 0}
        return {"counts": counts, "recovery_delay_s": {"median": delay}}

    assert table._cell([run(1, 0, 2.0), run(0, 1, None), run(0, 0, 4.0)]) == "lost 1·0·0, twice 0·1·0; restart 3.0 s"
    assert table._cell([run(0, 0, None)] * 3) == "0"
    assert table._cell([run(None, 0, None), run(0, 0, None)]) == "NOT RUN in 1 of 2"


def test_a_cell_reads_an_older_reports_stale_as_unobserved_and_shows_the_split() -> None:
    old = {"counts": {"lost": 0, "twice": 1, "concurrent": 1, "stale": 1}, "recovery_delay_s": {"median": None}}
    split = {"lost": 0, "twice": 1, "concurrent": 1, "stale_accepted": 0, "stale_refused": 1, "stale_unobserved": 0}
    new = {"counts": split, "recovery_delay_s": {"median": None}}
    assert table._cell([old, new]) == "twice 1·1, concurrent (not split) 1·1, stale_refused 0·1, stale_unobserved 1·0"
    v1 = {"counts": {"lost": 2, "twice": 0, "concurrent": 0, "stale": 0}, "recovery_delay_s": {"median": None}}
    assert table._cell([v1], version=1) == "final state not read 2"


def test_a_cell_names_the_policy_and_the_documented_recovery() -> None:
    counts = dict.fromkeys(normalised({"lost": 0, "twice": 0, "concurrent": 0, "stale": 0}), 0)
    counts.pop("concurrent")
    findings = [
        {"outcome": "failed_by_policy", "cause": "WorkerSettings.job_timeout"},
        {"outcome": "recovers_later", "cause": "documented to recover after 4 h"},
        {"outcome": "concurrent_stopped"},
    ]
    run = {
        "counts": {**counts, "failed_by_policy": 1, "recovers_later": 1, "concurrent_stopped": 1},
        "findings": findings,
        "recovery_delay_s": {"median": None},
    }
    assert table._cell([run]) == (
        "failed by policy (WorkerSettings.job_timeout) 1, not recovered within the run (documented to recover "
        "after 4 h) 1, concurrent (one stopped) 1"
    )


def test_a_fencing_promise_line_counts_accepted_and_says_what_it_could_not_judge() -> None:
    promise = {"outcome": "stale", "faults": ["pause"], "max": 0, "quote": "refused", "doc": "README"}
    split = {"lost": 0, "twice": 1, "concurrent": 1, "stale_accepted": 0, "stale_refused": 1, "stale_unobserved": 0}
    runs = [
        {"fault": "pause", "counts": split},
        {"fault": "pause", "counts": {**split, "stale_accepted": 1, "stale_refused": 0}},
        {"fault": "pause", "counts": {"lost": 0, "twice": 1, "concurrent": 1, "stale": 1}},
        {"fault": "kill9", "counts": {**split, "stale_accepted": 5}},
    ]
    line = table._promise_line(promise, runs)
    assert line.startswith("- promise (≤ 0), stale (accepted) under pause: observed 1, refused 1, NOT JUDGED in 1 ")
    caveat = table._promise_line({**promise, "max": None}, runs)
    assert caveat.startswith("- caveat, stale (accepted or unobserved) under pause: observed 2, refused 1 in 3 runs")


def test_a_report_written_before_the_split_is_split_from_its_own_ledger_and_pause_log() -> None:
    """A pause cell's overlap whose second run ended while the first worker was stopped is ``concurrent_stopped``;
    one that outlasted the pause is ``concurrent_executing``: re-judged without re-running (alkstore_faults.recheck)."""
    finding = {"outcome": "concurrent", "job": "j1", "workers": ["w1", "w2"], "times": [0.0, 3.0, 9.0], "detail": "d"}
    pause = {"kind": "pause", "at": 0.5, "until": 8.9, "worker": "w1", "jobs": ["j1"], "detail": ""}

    def run(second_end: float) -> dict[str, object]:
        ledger = [["j1", "w1", 1, 0.0, 9.0, True, None], ["j1", "w2", 2, 3.0, second_end, True, None]]
        counts = {"lost": 0, "twice": 1, "concurrent": 1, "stale": 1}
        return {"findings": [dict(finding)], "events": [pause], "ledger": ledger, "counts": counts}

    ended_in_pause, outlasted = run(4.0), run(12.0)
    report = {"runner": "x", "version": 1, "runs": [ended_in_pause, outlasted]}
    assert recheck(report) == ["x: split 2 concurrent finding(s) by the pause log"]
    assert [r["counts"]["concurrent_stopped"] for r in (ended_in_pause, outlasted)] == [1, 0]  # type: ignore[index]
    assert [r["counts"]["concurrent_executing"] for r in (ended_in_pause, outlasted)] == [0, 1]  # type: ignore[index]
    assert recheck(report) == []


def test_the_committed_reports_are_split() -> None:
    assert recheck_main(["--check"]) == 0, "rerun python -m alkstore_faults.recheck"
