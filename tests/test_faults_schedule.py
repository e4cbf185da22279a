"""The schedule workload (docs/runtime-faults.md, "The schedule workload"): its describe fields, its per-tick
checker, and the harness end to end on toysched (tests/fault_runtimes/toysched), a real scheduler of OS processes.

Correct, toysched fires each tick once, and misses none while a worker is stopped. Its mutants break it as real
schedulers break, and the command must say NOT KEPT citing the promise: ``every_fires`` (each of the three
workers fires every tick: ticks fired thrice) and ``misses`` (a scheduler that fires every other tick). A runner
that declares no schedule workload (every protocol-2 runner before it) is refused with exit 2, and its jobs
workload is what it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from alkstore_faults import schedule_table
from alkstore_faults.handler_records import Run, read_ledgers
from alkstore_faults.runner_cli import serve
from alkstore_faults.runner_program import parse_description
from alkstore_faults.schedule_checker import check_interval_schedule, check_schedule, window_ticks
from alkstore_faults.schedule_spec import SCHEDULE_FAULTS, parse_schedule

RUNTIMES = Path(__file__).resolve().parent / "fault_runtimes"
ROOT = Path(__file__).resolve().parent.parent
BASE = {
    "library": "x",
    "version": "1",
    "settings": [],
    "lease_s": 2,
    "recovery_window_s": 3,
    "faults": ["kill9"],
    "promises": [],
    "caveats": [],
}
SPEC = {"every_s": 1, "schedulers": "every", "faults": ["kill9", "pause"]}
SKIP = {"when": "scheduler_down", "quote": "no scheduler, no tick", "doc": "d"}


def _run(tick: float, worker: str = "w1", ok: bool | None = True, start: float = 1.0) -> Run:
    return Run(f"tick-{tick}", worker, 1, None, start, tick, None if ok is None else start + 0.5, ok, tick=tick)


def test_a_runner_without_workloads_serves_the_jobs_workload_alone() -> None:
    described = parse_description(dict(BASE))
    assert described.workloads == ("jobs",)
    assert described.schedule is None
    scheduled = parse_description({**BASE, "workloads": ["jobs", "schedule"], "schedule": SPEC})
    assert scheduled.schedule is not None
    assert scheduled.schedule.ticks == "aligned"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"workloads": ["cron"]}, "workloads must name some of jobs, schedule"),
        ({"workloads": ["schedule"]}, "'schedule'"),
        ({"schedule": SPEC}, "a schedule object needs 'schedule' in workloads"),
        ({"workloads": ["schedule"], "schedule": {**SPEC, "every_s": 5}}, "every_s must be 1"),
        ({"workloads": ["schedule"], "schedule": {**SPEC, "schedulers": "two"}}, "schedulers must be one of"),
        ({"workloads": ["schedule"], "schedule": {**SPEC, "faults": ["slow_handler"]}}, "schedule.faults"),
        ({"workloads": ["schedule"], "schedule": {**SPEC, "ticks": "cron"}}, "schedule.ticks must be one of"),
        ({"workloads": ["schedule"], "schedule": {**SPEC, "skips": [{"when": "never"}]}}, "each skip needs a when"),
        (
            {
                "workloads": ["schedule"],
                "schedule": {
                    **SPEC,
                    "promises": [{"outcome": "lost", "faults": ["*"], "max": 0, "quote": "q", "doc": "d"}],
                },
            },
            "outcome must be one of tick_twice, tick_missed",
        ),
    ],
)
def test_a_bad_schedule_description_is_refused_naming_the_field(change: dict[str, Any], words: str) -> None:
    with pytest.raises((ValueError, KeyError)) as caught:
        parse_description({**BASE, **change})
    assert words in str(caught.value)


def test_the_window_holds_the_whole_seconds_within_it() -> None:
    assert window_ticks(100.2, 103.0, 1.0) == [101.0, 102.0, 103.0]


def test_each_tick_is_once_twice_missed_or_skipped_by_its_completed_runs() -> None:
    runs = [
        _run(101.0),
        _run(102.0, "w1"),
        _run(102.0, "w2"),
        _run(103.0, "w1", ok=None),  # a run killed mid-tick, never run again
        _run(105.0, "w3", ok=False),
        _run(103.0, "w2", ok=True, start=9.0),  # a late run of 103 by another worker completes it
        _run(99.0),  # before the window
        _run(101.5),  # off the grid
    ]
    down = {"scheduler_down": [(106.2, 106.8)]}
    verdict = check_schedule(runs, window_ticks(100.5, 107.0, 1.0), 1.0, down, [SKIP])
    outcomes = {finding.tick: finding.outcome for finding in verdict.findings}
    assert outcomes == {
        102.0: "tick_twice",
        104.0: "tick_missed",
        105.0: "tick_missed",
        106.0: "tick_skipped",
        107.0: "tick_skipped",
    }
    assert verdict.counts() == {"ticks": 7, "tick_once": 2, "tick_twice": 1, "tick_missed": 2, "tick_skipped": 2}
    assert verdict.off_window == 2
    assert "within scheduler_down, skipped as documented: “no scheduler, no tick”" in verdict.findings[-1].detail


def test_an_interval_schedule_counts_gaps_as_missed_and_close_ticks_as_twice() -> None:
    runs = [_run(t) for t in (100.3, 101.31, 102.33, 102.5, 106.4, 107.4)] + [_run(107.4, "w2")]
    verdict = check_interval_schedule(runs, (100.0, 108.0), 1.0, {}, [])
    twice = sorted(f.tick for f in verdict.findings if f.outcome == "tick_twice")
    missed = [f for f in verdict.findings if f.outcome == "tick_missed"]
    assert twice == [102.5, 107.4]  # sent 0.17 s after the one before; run to completion twice
    assert len(missed) == 3  # 102.33 → 106.4: four periods, three ticks no scheduler sent
    assert verdict.counts()["ticks"] == 9


def test_a_tick_record_is_read_back_with_its_tick(tmp_path: Path) -> None:
    line = {"ev": "start", "job": "tick-5.000", "worker": "w1", "pid": 1, "attempt": None, "mono": 1.0, "wall": 5.1}
    (tmp_path / "w1.jsonl").write_text(json.dumps({**line, "tick": 5.0}) + "\n" + json.dumps(line) + "\n")
    records, skipped = read_ledgers(tmp_path)
    assert [record.tick for record in records] == [5.0, None]
    assert not skipped


def test_a_runner_without_a_schedule_refuses_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve({}, lambda jobs: None, lambda: None, ["schedule"]) == 2
    assert "this runner declares no schedule workload" in capsys.readouterr().err
    ran: list[str] = []
    assert serve({}, lambda jobs: None, lambda: None, ["schedule"], schedule=lambda: ran.append("s")) == 0
    assert ran == ["s"]


def test_the_schedule_workload_of_a_jobs_only_runner_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "alkstore_cli", "faults", str(RUNTIMES / "toyq"), "--workload", "schedule"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "serves the workloads jobs, not 'schedule'" in done.stderr


def _schedule(runtime: str, fault: str, report: Path) -> tuple[int, dict[str, Any], str]:
    command = [sys.executable, "-m", "alkstore_cli", "faults", str(RUNTIMES / runtime), "--workload", "schedule"]
    done = subprocess.run(
        [*command, "--short", "--fault", fault, "--seed", "7", "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stdout


def test_correct_toysched_fires_each_tick_once_with_a_worker_stopped(tmp_path: Path) -> None:
    code, report, out = _schedule("toysched", "pause", tmp_path / "toysched.json")
    assert code == 0, out
    counts = report["runs"][0]["counts"]
    assert counts["ticks"] >= 10, out
    assert counts["tick_once"] == counts["ticks"], out
    assert report["kind"] == "alkstore-runtime-faults-schedule"


def test_a_scheduler_in_every_worker_without_a_claim_fires_each_tick_thrice(tmp_path: Path) -> None:
    code, report, out = _schedule("toysched_every_fires", "kill9", tmp_path / "every.json")
    assert code == 1, out
    assert "BROKEN PROMISE under kill9 (round 0): tick_twice" in out, out
    run = report["runs"][0]
    assert run["counts"]["tick_twice"] >= run["counts"]["ticks"] - 2, run["counts"]
    assert any(len([r for r in finding["runs"] if r[3]]) == 3 for finding in run["findings"]), run["findings"]


def test_a_scheduler_that_skips_ticks_is_caught_missing_them(tmp_path: Path) -> None:
    code, report, out = _schedule("toysched_misses", "pause", tmp_path / "misses.json")
    assert code == 1, out
    assert "BROKEN PROMISE under pause (round 0): tick_missed" in out, out
    counts = report["runs"][0]["counts"]
    assert counts["tick_missed"] >= counts["ticks"] // 2 - 1, counts
    assert any(f["detail"] == "no run began" for f in report["runs"][0]["findings"])


REPORTS = sorted((ROOT / "docs" / "runtime-faults" / "schedule").glob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=[path.stem for path in REPORTS])
def test_each_committed_schedule_report_ran_every_fault_three_times(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    spec = parse_schedule(report["schedule"])
    assert set(spec.faults) <= set(SCHEDULE_FAULTS)
    for fault in spec.faults:
        runs = [run for run in report["runs"] if run["fault"] == fault]
        assert sorted(run["round"] for run in runs) == [0, 1, 2], f"{path.name}: {fault}"
        for run in runs:
            counts = run["counts"]
            parts = counts["tick_once"] + counts["tick_twice"] + counts["tick_missed"] + counts["tick_skipped"]
            assert parts == counts["ticks"] > 0, f"{path.name}: {fault} round {run['round']}: {counts}"
            assert len(run["findings"]) == counts["ticks"] - counts["tick_once"]


def test_the_pages_schedule_table_is_the_reports() -> None:
    assert REPORTS, "no committed schedule report"
    assert schedule_table.main(["--check"]) == 0
