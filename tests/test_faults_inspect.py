"""The harness's side of ``inspect`` (docs/runtime-faults.md, "inspect"): whatever a runner does there — answers,
crashes, hangs, prints garbage or leaves a job out — the harness gets one state per job, ``unknown`` with the
reason where the runner gave none, and never raises."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from alkstore_faults import runner_program as runner_module
from alkstore_faults.runner_program import Runner, missing_package, parse_states

JOBS = ["j0000", "j0001"]
BEHAVIOURS = {
    "answers": 'print(\'{"job": "j0000", "state": "running", "library_state": "doing", "until": 5}\')\n'
    'print(\'{"job": "j0001", "state": "absent"}\')',
    "crashes": "raise SystemExit('the broker went away')",
    "hangs": "import time; time.sleep(30)",
    "garbage": 'print(\'not json\'); print(\'{"job": "j0000", "state": "vanished"}\')',
    "leaves one out": 'print(\'{"job": "j0001", "state": "completed"}\')',
}


def _runner(tmp_path: Path, behaviour: str) -> Runner:
    script = tmp_path / "runner.py"
    script.write_text(BEHAVIOURS[behaviour] + "\n", encoding="utf-8")
    return Runner("x", "python", "dir", tmp_path, (sys.executable, str(script)), "x", 2)


@pytest.mark.parametrize(
    ("behaviour", "states", "reason"),
    [
        ("answers", ["running", "absent"], None),
        ("crashes", ["unknown", "unknown"], "inspect exited 1: the broker went away"),
        ("hangs", ["unknown", "unknown"], "inspect could not finish"),
        ("garbage", ["unknown", "unknown"], "inspect printed no valid state for it (line 1: "),
        ("leaves one out", ["unknown", "completed"], "inspect said nothing"),
    ],
)
def test_inspect_gives_one_state_per_job_whatever_the_runner_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str, states: list[str], reason: str | None
) -> None:
    monkeypatch.setattr(runner_module, "INSPECT_TIMEOUT_S", 2.0)
    got = _runner(tmp_path, behaviour).inspect("", "q", tmp_path / "jobs.jsonl", tmp_path, JOBS)
    assert [state["job"] for state in got] == JOBS
    assert [state["state"] for state in got] == states
    if reason is not None:
        assert reason in str(got[0]["reason"])
    else:
        assert (got[0]["until"], got[0]["library_state"]) == (5.0, "doing")


def test_a_state_outside_the_protocol_is_unknown_naming_the_rule() -> None:
    [state] = parse_states('{"job": "j0000", "state": "vanished"}\n', ["j0000"])
    assert state["state"] == "unknown"
    assert "state must be one of completed, failed" in state["reason"]


@pytest.mark.parametrize(
    ("stderr", "package"),
    [
        ("importlib.metadata.PackageNotFoundError: No package metadata was found for arq\n", "'arq'"),
        ("ModuleNotFoundError: No module named 'asyncpg'\n", "'asyncpg'"),
        ("Error: Cannot find module 'pg-boss'\nRequire stack:\n", "'pg-boss'"),
        (
            "runner needs the npm package 'bullmq', which is not installed: install it (npm install bullmq)\n",
            "'bullmq'",
        ),
        ("<internal:rubygems>:85:in `require': cannot load such file -- sidekiq (LoadError)\n", "'sidekiq'"),
        (
            "runner needs the Ruby package 'sidekiq', which is not installed: install it (apt-get install -y "
            "ruby-sidekiq)\n",
            "'sidekiq'",
        ),
    ],
)
def test_a_missing_client_library_is_named_in_one_line(stderr: str, package: str) -> None:
    line = missing_package("Traceback (most recent call last):\n  ...\n" + stderr)
    assert line is not None
    assert package in line
    assert "\n" not in line
    assert missing_package("ValueError: bad\n") is None
