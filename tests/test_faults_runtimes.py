"""The runtime-faults harness end to end on toyq (tests/fault_runtimes/toyq), a real runtime of OS processes.

Correct, toyq keeps its promises under every fault it takes. Each of its three mutants breaks one way a real
runtime breaks, and ``alkstore faults`` must say NOT KEPT citing the promise it broke, with the finding that
shows it: a worker that acks before the handler runs and one that never re-delivers after a crash lose the
job a ``kill -9`` hit; one that re-delivers to a live worker runs a slow job on two workers at once. The mutants
run as three ``alkstore faults`` processes at once: the runs mostly wait for leases to expire.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_faults.report import SCHEMA
from alkstore_faults.runner import find_runner
from alkstore_faults.scenario import run_fault

RUNTIMES = Path(__file__).resolve().parent / "fault_runtimes"
MUTANTS = [
    ("toyq_ack_first", "kill9", "lost"),
    ("toyq_no_redeliver", "kill9", "lost"),
    ("toyq_redeliver_live", "slow_handler", "concurrent"),
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
    process = _faults("toyq", tmp_path / "toyq.json")
    output, _ = process.communicate(timeout=240)
    assert process.returncode == 0, output
    report = _report(tmp_path / "toyq.json")
    runs = report["runs"]
    assert isinstance(runs, list)
    assert [run["fault"] for run in runs] == ["kill9", "pause", "slow_handler"]
    assert all(run["reached"] and run["counts"]["lost"] == 0 for run in runs), output
    kill = runs[0]
    assert kill["recovery_delay_s"]["n"] == 1, output  # the killed job started again, after its lease
    assert kill["replay"] == f"alkstore faults {RUNTIMES / 'toyq'} --fault kill9 --seed 7 --round 0"


def test_each_broken_runtime_is_caught_citing_the_promise_it_breaks(tmp_path: Path) -> None:
    processes = {name: _faults(name, tmp_path / f"{name}.json", "--fault", fault) for name, fault, _ in MUTANTS}
    outputs = {name: process.communicate(timeout=240)[0] for name, process in processes.items()}
    for name, fault, outcome in MUTANTS:
        assert processes[name].returncode == 1, outputs[name]
        assert f"BROKEN PROMISE under {fault} (round 0): {outcome}" in outputs[name]
        [run] = _report(tmp_path / f"{name}.json")["runs"]
        assert outcome in [promise["outcome"] for promise in run["broken_promises"]]
        finding = next(finding for finding in run["findings"] if finding["outcome"] == outcome)
        assert finding["job"].startswith("j")
        assert f"--fault {fault} --seed 7 --round 0" in run["replay"]


def test_no_worker_outlives_its_run_even_when_the_runner_fails_to_enqueue(tmp_path: Path) -> None:
    runner = find_runner(str(RUNTIMES / "toyq"))
    description = runner.describe()
    broken = type(runner)(
        runner.name,
        runner.language,
        runner.broker,
        runner.directory,
        (*runner.command, "--no-such-option"),
        runner.spec,
    )
    run = asyncio.run(run_fault(broken, description, "kill9", 7, 0))
    assert not run.reached
    assert run.error is not None
    assert "enqueue exited" in run.error
    assert run.pids
    for pid in run.pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
