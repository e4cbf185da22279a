"""The procrastinate runner and its no-recovery variant (ecosystem/procrastinate/runner/runner.py): the variant is
the same runner without the stalled-jobs recipe, says so (``variant_of``, ``left_out``) and declares no rule that
would run a stalled job again; ``inspect`` reads a job left in ``doing`` by a killed worker as held until the
recipe retries it (its worker's last heartbeat + 30 s + one period), and as held forever without the recipe."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime
from types import ModuleType, SimpleNamespace

import pytest

from alkstore_faults.runner_program import find_runner, parse_description, runner_directory

pytest.importorskip("procrastinate", reason="the '.[ecosystem]' extra is not installed")


def runner_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "procrastinate_runner", runner_directory("procrastinate") / "runner.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def job(status: str, worker_id: int | None = None, scheduled_at: datetime | None = None) -> SimpleNamespace:
    return SimpleNamespace(status=status, worker_id=worker_id, attempts=1, scheduled_at=scheduled_at)


def test_the_variant_is_the_runner_without_the_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    runner = runner_module()
    described = {}
    for name, argv in (("procrastinate", ["describe"]), ("procrastinate-no-recovery", ["--no-recovery", "describe"])):
        assert runner.main(argv) == 0
        described[name] = json.loads(capsys.readouterr().out)
    recipe, variant = described["procrastinate"], described["procrastinate-no-recovery"]
    assert "variant_of" not in recipe
    assert variant["variant_of"] == "procrastinate"
    assert variant["left_out"]
    [rule] = recipe["recovery_rules"]
    assert rule["state"] == "running"
    assert rule["after_s"] == recipe["recovery_window_s"] == 35.0
    assert variant["recovery_rules"] == []
    assert [caveat["outcome"] for caveat in variant["caveats"]] == ["lost"]
    assert any("retry_stalled_jobs" in setting["name"] for setting in recipe["settings"])
    assert not any("retry_stalled_jobs" in setting["name"] for setting in variant["settings"])
    for data in described.values():
        parse_description(data)
    assert find_runner("procrastinate-no-recovery").argv("describe")[-2:] == ["--no-recovery", "describe"]


def test_a_killed_workers_job_is_held_until_the_recipe_retries_it() -> None:
    state_of = runner_module().state_of
    held = state_of(job("doing", worker_id=7), {7: 1000.0}, True, 1010.0)
    assert held == {
        "state": "running",
        "library_state": "doing",
        "reason": None,
        "until": 1035.0,  # heartbeat 1000 + 30 s (get_stalled_jobs' default) + the recipe's 5 s period
        "held_by": "7",
        "attempts": 1,
    }
    assert state_of(job("doing", worker_id=7), {7: 1000.0}, True, 1100.0)["until"] == 1105.0  # stalled already
    assert state_of(job("doing"), {}, True, 1010.0)["until"] == 1015.0  # its worker's heartbeat row was pruned
    assert state_of(job("doing", worker_id=7), {7: 1000.0}, False, 1010.0)["until"] is None  # no recipe, no rule


def test_the_other_statuses_read_as_the_protocols_states() -> None:
    state_of = runner_module().state_of
    later = datetime.fromtimestamp(2000.0, UTC)
    scheduled = state_of(job("todo", scheduled_at=later), {}, True, 1000.0)
    assert (scheduled["state"], scheduled["until"]) == ("scheduled", 2000.0)
    words = {status: state_of(job(status), {}, True, 1000.0)["state"] for status in
             ("todo", "succeeded", "failed", "cancelled", "aborted", "aborting")}  # fmt: skip
    assert words == {
        "todo": "queued",
        "succeeded": "completed",
        "failed": "failed",
        "cancelled": "dead",
        "aborted": "failed",
        "aborting": "unknown",  # legacy, unused by procrastinate 3: read, never guessed
    }
