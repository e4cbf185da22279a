"""The pg-boss and graphile-worker runners' descriptions (docs/runtime-faults.md), the rule that lets a runner
declare a lease of hours (graphile-worker's 4-hour lock) only when it takes no fault that outlives the lease, and
the protocol's side every Node runner shares (ecosystem/kit/runner_protocol.js): the ledger records its handler
writes, as the harness reads them, and the refusal of anything but its subcommands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from alkstore_faults.handler_records import read_ledgers, runs_of
from alkstore_faults.runner_program import ECOSYSTEM, parse_description, runner_directory

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
    directory = runner_directory(runner)
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


NODE_RUNNERS = ["bullmq", "graphile_worker", "pgboss"]
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")


@needs_node
def test_a_node_handlers_ledger_reads_back_as_its_runs(tmp_path: Path) -> None:
    """Two jobs through the shared handler (one told to fail) and an ack: the runs the checker pairs from them."""
    script = """
    const { perform, record } = require('./runner_protocol');
    (async () => {
      await perform({ id: 'j1', duration_s: 0.01, fail: false }, 1);
      record('ack', 'j1', 1, { accepted: false });
      await perform({ id: 'j2', duration_s: 0, fail: true }, 2).then(
        () => process.exit(3),
        (error) => process.stdout.write(error.message),
      );
    })();
    """
    env = {**os.environ, "ALKSTORE_FAULTS_WORKER": "w1", "ALKSTORE_FAULTS_LEDGER": str(tmp_path / "w1.jsonl")}
    out = subprocess.run(
        ["node", "-e", script], cwd=ECOSYSTEM / "kit", env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout == "job j2 was told to fail"
    records, skipped = read_ledgers(tmp_path)
    assert skipped == []
    assert [(record.ev, record.job, record.worker, record.attempt) for record in records] == [
        ("start", "j1", "w1", 1),
        ("end", "j1", "w1", 1),
        ("ack", "j1", "w1", 1),
        ("start", "j2", "w1", 2),
        ("end", "j2", "w1", 2),
    ]
    [first, second] = runs_of(records)
    assert (first.ok, first.accepted, first.end is not None and first.end >= first.start + 0.01) == (True, False, True)
    assert (second.ok, second.accepted) == (False, None)


@needs_node
@pytest.mark.parametrize("runner", NODE_RUNNERS)
@pytest.mark.parametrize("argv", [["run"], ["enqueue"], []], ids=repr)
def test_a_node_runner_refuses_anything_but_its_subcommands(runner: str, argv: list[str]) -> None:
    directory = runner_directory(runner)
    if not (directory / "node_modules").is_dir():
        pytest.skip(f"{runner}'s npm packages are not installed: bash ci/faults.sh install")
    out = subprocess.run(["node", "runner.js", *argv], cwd=directory, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert (
        out.stderr
        == f"unknown command {json.dumps(' '.join(argv))}: describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE\n"
    )


NODE_RUNNER = """
const {{ serve, record }} = require({protocol});
serve({{
  describe: () => ({{ version: require('no-such-npm-package/package.json').version }}),
  enqueue: async () => {{}},
  worker: async () => record('cancelled', 'j1', 1, {{ by: 'library', reason: 'job_timeout' }}),
  {inspect}
}});
"""


def _node_runner(tmp_path: Path, inspect: str) -> Path:
    script = tmp_path / "runner.js"
    protocol = json.dumps(str(ECOSYSTEM / "kit" / "runner_protocol.js"))
    script.write_text(NODE_RUNNER.format(protocol=protocol, inspect=inspect), encoding="utf-8")
    (tmp_path / "jobs.jsonl").write_text('{"id": "j1", "duration_s": 0, "fail": false}\n', encoding="utf-8")
    return script


@needs_node
def test_a_node_runners_inspect_prints_a_state_a_line_and_its_cancelled_record_ends_the_run(tmp_path: Path) -> None:
    script = _node_runner(tmp_path, "inspect: async (jobs) => jobs.map((job) => ({ job: job.id, state: 'queued' })),")
    env = {**os.environ, "ALKSTORE_FAULTS_WORKER": "w1", "ALKSTORE_FAULTS_LEDGER": str(tmp_path / "w1.jsonl")}
    argv = ["node", str(script), "inspect", str(tmp_path / "jobs.jsonl")]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (0, '{"job":"j1","state":"queued"}\n')
    subprocess.run(["node", str(script), "worker"], env=env, check=True, timeout=60)
    [record] = read_ledgers(tmp_path)[0]
    assert (record.ev, record.reason) == ("cancelled", "library: job_timeout")


@needs_node
def test_a_node_runner_without_its_package_or_inspect_says_so_in_one_line(tmp_path: Path) -> None:
    script = _node_runner(tmp_path, "")
    out = subprocess.run(["node", str(script), "describe"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr == (
        "runner needs the npm package 'no-such-npm-package', which is not installed: install it "
        "(npm install no-such-npm-package)\n"
    )
    out = subprocess.run(["node", str(script), "inspect", "jobs.jsonl"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "(this runner has no inspect: protocol 1)" in out.stderr
