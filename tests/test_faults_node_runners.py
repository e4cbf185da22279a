"""The pg-boss and graphile-worker runners' descriptions (docs/runtime-faults.md), and the rule that lets a runner
declare a lease of hours (graphile-worker's 4-hour lock) only when it takes no fault that outlives the lease."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from alkstore_faults.runner import RUNNERS, parse_description

BASE = {
    "library": "x",
    "version": "1",
    "settings": [],
    "recovery_window_s": 15,
    "promises": [],
}


def test_a_lease_of_hours_is_declared_as_it_is_when_no_fault_outlives_it() -> None:
    description = parse_description({**BASE, "lease_s": 14400, "faults": ["kill9", "broker_restart", "net_cut"]})
    assert description.lease_s == 14400


@pytest.mark.parametrize("fault", ["pause", "slow_handler"])
def test_a_lease_of_hours_with_a_fault_outliving_it_is_refused_naming_the_fault(fault: str) -> None:
    with pytest.raises(ValueError, match=rf"faults \['{fault}'\] outlive the lease, and a lease_s of 14400.0 s"):
        parse_description({**BASE, "lease_s": 14400, "faults": ["kill9", fault]})


def test_a_lease_over_a_day_is_refused() -> None:
    with pytest.raises(ValueError, match=r"lease_s up to 86400 s .* got 86401.0 and 15.0"):
        parse_description({**BASE, "lease_s": 86401, "faults": ["kill9"]})


@pytest.mark.parametrize(
    ("runner", "library", "promised"),
    [("pgboss", "pg-boss", ["twice"]), ("graphile_worker", "graphile-worker", [])],
)
def test_the_node_postgres_runners_describe_themselves(runner: str, library: str, promised: list[str]) -> None:
    directory = RUNNERS / runner
    manifest = json.loads((directory / "runner.json").read_text())
    assert (manifest["name"], manifest["language"], manifest["broker"]) == (runner, "node", "postgres")
    if shutil.which("node") is None or not (directory / "node_modules").is_dir():
        pytest.skip(f"{runner}'s npm packages are not installed: bash ci/faults.sh install")
    out = subprocess.run(
        [*manifest["command"], "describe"], cwd=directory, capture_output=True, text=True, timeout=60, check=True
    )
    description = parse_description(json.loads(out.stdout))
    assert description.library == library
    assert [promise.outcome for promise in description.promises] == promised
    assert all(setting["doc"] for setting in description.settings)
