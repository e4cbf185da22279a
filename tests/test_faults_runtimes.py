"""The runtime-faults harness end to end on toyq (tests/fault_runtimes/toyq), a real runtime of OS processes.

Correct, toyq keeps its promises under every fault it takes. Each of its mutants breaks one way a real
runtime breaks, and ``alkstore faults`` must say NOT KEPT citing the promise it broke, with the finding that
shows it, classed by what the library itself holds (``inspect``): a worker that acks before the handler runs
(the library says completed), one that never re-delivers after a crash (held forever) and one that drops a
claimed job from its storage (no record) lose the job a ``kill -9`` hit; one that re-delivers to a live worker
runs a slow job on two workers at once; one whose ack ignores the claim's token lets a worker paused past its
lease complete a job another worker was given (a late completion the library accepted, against toyq's fencing
promise). Two more keep the promise and must be classed for what they did: a job failed by a declared timeout
policy is ``failed_by_policy`` (and its run ``cancelled``), a killed worker's job held by a documented hour-long
lock ``recovers_later``. The runtimes run as ``alkstore faults`` processes at once: the runs mostly wait.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_faults import scenario
from alkstore_faults.report import SCHEMA
from alkstore_faults.runner import find_runner

RUNTIMES = Path(__file__).resolve().parent / "fault_runtimes"
MUTANTS = [  # the runtime, the fault, the promise it breaks, the finding that shows it, words of its detail
    ("toyq_ack_first", "kill9", "lost", "lost", "the library marked done a run that never finished"),
    ("toyq_no_redeliver", "kill9", "lost", "lost", "held forever, and no documented recovery rule"),
    ("toyq_drop", "kill9", "lost", "lost", "it has no record of the job"),
    ("toyq_redeliver_live", "slow_handler", "concurrent", "concurrent_executing", "both executing"),
    ("toyq_unfenced_ack", "pause", "stale", "stale_accepted", "the library accepted"),
]
CLASSED = [  # the runtime, the fault, the outcome, its cause; each keeps toyq's lost promise
    ("toyq_job_timeout", "slow_handler", "failed_by_policy", "JOB_TIMEOUT_S"),
    ("toyq_long_lock", "kill9", "recovers_later", "documented to recover after 1 h"),
]


def _faults(runtime: str, report: Path, *options: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "alkstore_contract.report.cli", "faults", str(RUNTIMES / runtime), "--short"]
    return subprocess.Popen(
        [*command, "--seed", "7", "--report", str(report), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _report(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    return report


def test_correct_toyq_keeps_its_promises_under_every_fault(tmp_path: Path) -> None:
    process = _faults("toyq", tmp_path / "toyq.json", "--keep")
    output, _ = process.communicate(timeout=240)
    kept = [Path(path) for path in re.findall(r"kept in (\S+) \(worker logs in logs/\)", output)]
    try:
        assert len(kept) == 4, output
        assert all((path / "logs" / "w1.log").is_file() and (path / "ledgers" / "w1.jsonl").is_file() for path in kept)
    finally:
        for path in kept:
            shutil.rmtree(path, ignore_errors=True)
    assert process.returncode == 0, output
    report = _report(tmp_path / "toyq.json")
    runs = report["runs"]
    assert isinstance(runs, list)
    assert [run["fault"] for run in runs] == ["kill9", "startup", "pause", "slow_handler"]
    assert all(run["reached"] and run["counts"]["lost"] == 0 for run in runs), output
    assert all(state["state"] == "completed" for run in runs for state in run["library_states"]), output
    kill, startup, pause = runs[0], runs[1], runs[2]
    assert "at steady state (every worker had taken a job)" in kill["events"][0]["detail"], output
    assert "at its first job" in startup["events"][0]["detail"], output
    assert kill["recovery_delay_s"]["n"] == 1, output  # the killed job started again, after its lease
    assert (pause["counts"]["stale_accepted"], pause["counts"]["stale_unobserved"]) == (0, 0), output
    assert kill["replay"] == f"alkstore faults {RUNTIMES / 'toyq'} --fault kill9 --seed 7 --round 0"


def test_each_broken_runtime_is_caught_and_each_documented_rule_classed(tmp_path: Path) -> None:
    every = [(name, fault) for name, fault, *_ in MUTANTS + CLASSED]
    processes = {name: _faults(name, tmp_path / f"{name}.json", "--fault", fault) for name, fault in every}
    outputs = {name: process.communicate(timeout=240)[0] for name, process in processes.items()}
    for name, fault, outcome, found, words in MUTANTS:
        assert processes[name].returncode == 1, outputs[name]
        assert f"BROKEN PROMISE under {fault} (round 0): {outcome}" in outputs[name]
        [run] = _report(tmp_path / f"{name}.json")["runs"]
        assert outcome in [promise["outcome"] for promise in run["broken_promises"]]
        finding = next(finding for finding in run["findings"] if finding["outcome"] == found)
        assert finding["job"].startswith("j")
        assert words in finding["detail"], finding
        assert f"--fault {fault} --seed 7 --round 0" in run["replay"]
    for name, _, outcome, cause in CLASSED:
        assert "BROKEN PROMISE" not in outputs[name], outputs[name]
        [run] = _report(tmp_path / f"{name}.json")["runs"]
        assert (run["counts"]["lost"], run["counts"][outcome]) == (0, 1), outputs[name]
        assert [finding.get("cause") for finding in run["findings"] if finding["outcome"] == outcome] == [cause]
    [timed_out] = _report(tmp_path / "toyq_job_timeout.json")["runs"]
    assert timed_out["counts"]["cancelled"] == 1, outputs["toyq_job_timeout"]


def test_no_process_outlives_a_run_whose_workers_ignore_sigterm_and_never_run_a_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = find_runner(str(RUNTIMES / "stubborn"))
    pids = tmp_path / "pids"
    monkeypatch.setenv("STUBBORN_PIDS", str(pids))
    monkeypatch.setattr(scenario, "IN_FLIGHT_TIMEOUT_S", 2.0)
    monkeypatch.setattr(scenario, "STEADY_TIMEOUT_S", 2.0)
    run = asyncio.run(scenario.run_fault(runner, runner.describe(), "kill9", 7, 0))
    assert not run.reached
    assert run.error is not None
    assert "the fault reached no job" in run.error
    started = [int(pid) for pid in pids.read_text(encoding="utf-8").split()]
    assert len(started) == 4  # two workers, each with its child in a process group of its own
    assert [pid for pid in started if _running(pid)] == []


def _running(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (dead, waiting for this machine's init to reap it) does not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
