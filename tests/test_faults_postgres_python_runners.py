"""The chancy and oban runners (docs/runtime-faults.md): each in a venv of its own (``{python:chancy}``,
``{python:oban}``, made by ``bash ci/faults.sh install``; oban needs Python 3.12), described as the protocol demands,
with the recovery rule their production settings give, and refusing anything but the protocol's subcommands.

The test command's venv has neither library: without its venv each test skips, naming the install command."""

from __future__ import annotations

import json
import tomllib

import pytest

from alkstore_faults.runner_program import Description, Runner, RunnerError, find_runner, runner_directory

INSTALL = "bash ci/faults.sh install"
RUNNERS = {"chancy": "chancy", "oban": "oban"}


def _runner(name: str) -> Runner:
    try:
        return find_runner(name)
    except RunnerError as exc:
        if "needs the interpreter" in str(exc):
            pytest.skip(f"{name}'s venv .venv-{name} is not made here: {INSTALL}")
        raise


def _described(name: str) -> Description:
    runner = _runner(name)
    try:
        return runner.describe()
    except RunnerError as exc:
        if "runner needs the Python package" in str(exc):
            pytest.skip(f"{name} is not installed in .venv-{name}: {INSTALL}")
        raise


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_the_manifest_names_a_venv_of_its_own_and_the_throwaway_postgres(name: str) -> None:
    manifest = json.loads((runner_directory(name) / "runner.json").read_text(encoding="utf-8"))
    assert manifest == {
        "protocol": 2,
        "name": name,
        "language": "python",
        "command": [f"{{python:{name}}}", "runner.py"],
        "broker": "postgres",
    }


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_the_runner_describes_its_library_and_promises_no_loss_under_a_killed_worker(name: str) -> None:
    description = _described(name)
    assert description.library == RUNNERS[name]
    assert all(setting["doc"] for setting in description.settings)
    lost = [promise for promise in description.promises if promise.outcome == "lost"]
    assert lost
    assert all({"kill9", "startup"} <= set(promise.faults) for promise in lost)
    held = [rule for rule in description.recovery_rules if rule["state"] == "running"]
    assert len(held) == 1
    assert held[0]["after_s"] is not None
    assert held[0]["after_s"] <= description.recovery_window_s


def test_obans_lease_is_the_lifelines_rescue_after_in_its_oban_toml() -> None:
    """The Lifeline rescues a job executing longer than ``rescue_after``: that is the lease a slow handler outlives."""
    config = tomllib.loads((runner_directory("oban") / "oban.toml").read_text(encoding="utf-8"))
    description = _described("oban")
    assert description.lease_s == config["lifeline"]["rescue_after"]
    settings = {setting["name"]: setting["value"] for setting in description.settings}
    assert settings["oban.toml [lifeline] rescue_after"] == config["lifeline"]["rescue_after"]
    assert settings["oban.toml [lifeline] interval"] == config["lifeline"]["interval"]


def test_chancys_lease_is_its_workers_heartbeat_timeout() -> None:
    description = _described("chancy")
    settings = {setting["name"]: setting["value"] for setting in description.settings}
    assert description.lease_s == settings["Worker(heartbeat_timeout=...)"]
    assert settings["Recovery(poll_interval=...)"] < description.lease_s


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_the_runner_refuses_an_unknown_subcommand_with_status_2(name: str) -> None:
    runner = _runner(name)
    done = runner.call(["drain"], 120, runner.env("", ""))
    if "runner needs the Python package" in done.stderr:
        pytest.skip(f"{name} is not installed in .venv-{name}: {INSTALL}")
    assert done.returncode == 2
    assert "unknown command 'drain'" in done.stderr
