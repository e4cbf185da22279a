"""The Ruby runners (Sidekiq with its open-source fetch and with gitlab-sidekiq-fetcher's reliable fetch,
delayed_job on Postgres) and the protocol's side they share (ecosystem/kit/runner_protocol.rb): their descriptions,
the ledger records the shared handler writes, as the harness reads them, the one line of a missing library and the
refusal of anything but the four subcommands. Ruby and the gems come from Debian (`bash ci/faults.sh install`), which
the test command does not run: without them each test skips, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from alkstore_faults.handler_records import read_ledgers, runs_of
from alkstore_faults.runner_program import ECOSYSTEM, missing_package, parse_description, runner_directory
from tests.broken_runtimes import lost_under_kill9
from tests.full_matrix import full_matrix_only

INSTALL = "bash ci/faults.sh install (apt-get install ruby ruby-sidekiq ruby-gitlab-sidekiq-fetcher ...)"
needs_ruby = pytest.mark.skipif(shutil.which("ruby") is None, reason=f"no ruby on PATH: {INSTALL}")
RUBY_RUNNERS = {
    "sidekiq": ("sidekiq", "redis", ["sidekiq"]),
    "sidekiq_reliable_fetch": ("sidekiq", "redis", ["sidekiq", "sidekiq-reliable-fetch"]),
    "delayed_job": ("delayed_job", "postgres", ["active_record", "delayed_job", "delayed_job_active_record", "pg"]),
}


def _gems_missing(gems: list[str]) -> list[str]:
    """The gems of ``gems`` Ruby cannot require here."""
    found = subprocess.run(
        ["ruby", "-e", "ARGV.each { |g| begin; require g; rescue LoadError; puts g; end }", *gems],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return found.stdout.split()


@needs_ruby
@pytest.mark.parametrize("runner", sorted(RUBY_RUNNERS))
def test_a_ruby_runner_describes_itself(runner: str) -> None:
    library, broker, gems = RUBY_RUNNERS[runner]
    directory = runner_directory(runner)
    manifest = json.loads((directory / "runner.json").read_text())
    assert (manifest["name"], manifest["language"], manifest["broker"]) == (runner, "ruby", broker)
    missing = _gems_missing(gems)
    if missing:
        pytest.skip(f"{runner}'s gems are not installed ({', '.join(missing)}): {INSTALL}")
    out = subprocess.run(
        [*manifest["command"], "describe"], cwd=directory, capture_output=True, text=True, timeout=60, check=True
    )
    description = parse_description(json.loads(out.stdout))
    assert description.library == library
    assert all(setting["doc"] for setting in description.settings)
    assert {"kill9", "pause"} <= set(description.faults)  # the two fetches side by side (issue 50)


@needs_ruby
def test_the_two_sidekiq_fetches_are_judged_against_their_own_words() -> None:
    """Open-source fetch: its documented loss is a caveat; the reliable fetch promises no loss under kill9."""
    described = {}
    for runner in ("sidekiq", "sidekiq_reliable_fetch"):
        if _gems_missing(RUBY_RUNNERS[runner][2]):
            pytest.skip(f"{runner}'s gems are not installed: {INSTALL}")
        out = subprocess.run(
            ["ruby", "runner.rb", "describe"], cwd=runner_directory(runner), capture_output=True, text=True, timeout=60
        )
        described[runner] = parse_description(json.loads(out.stdout))
    basic, reliable = described["sidekiq"], described["sidekiq_reliable_fetch"]
    assert basic.promises == ()
    assert [c.outcome for c in basic.caveats] == ["lost"]
    assert "BRPOP" in basic.caveats[0].quote
    [promise] = reliable.promises
    assert (promise.outcome, promise.limit, promise.covers("kill9"), promise.covers("pause")) == ("lost", 0, True, True)
    assert basic.lease_s == reliable.lease_s  # the same pause and slow handler for both rows


@needs_ruby
def test_a_ruby_handlers_ledger_reads_back_as_its_runs(tmp_path: Path) -> None:
    """Two jobs through the shared handler (one told to fail), an ack and a cancelled run."""
    script = """
    require_relative 'runner_protocol'
    RunnerProtocol.perform('j1', 0.01, false, 1)
    RunnerProtocol.record('ack', 'j1', 1, accepted: false)
    begin
      RunnerProtocol.perform('j2', 0, true, 2)
      exit 3
    rescue RunnerProtocol::JobFailed => e
      $stdout.write(e.message)
    end
    RunnerProtocol.record('start', 'j3', nil)
    RunnerProtocol.record('cancelled', 'j3', nil, by: 'library', reason: 'max_run_time')
    """
    env = {**os.environ, "ALKSTORE_FAULTS_WORKER": "w1", "ALKSTORE_FAULTS_LEDGER": str(tmp_path / "w1.jsonl")}
    out = subprocess.run(
        ["ruby", "-e", script], cwd=ECOSYSTEM / "kit", env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout == "job j2 was told to fail"
    records, skipped = read_ledgers(tmp_path)
    assert (skipped, {record.worker for record in records}) == ([], {"w1"})
    events = "start j1 1, end j1 1, ack j1 1, start j2 2, end j2 2, start j3 None, cancelled j3 None"
    assert ", ".join(f"{record.ev} {record.job} {record.attempt}" for record in records) == events
    first, second, third = runs_of(records)
    assert (first.ok, first.accepted, first.end is not None and first.end >= first.start + 0.01) == (True, False, True)
    assert (second.ok, second.accepted) == (False, None)
    assert (third.ok, third.cancelled) == (False, "library: max_run_time")


@needs_ruby
@pytest.mark.parametrize("runner", sorted(RUBY_RUNNERS))
@pytest.mark.parametrize("argv", [["run"], ["enqueue"], []], ids=repr)
def test_a_ruby_runner_refuses_anything_but_its_subcommands(runner: str, argv: list[str]) -> None:
    out = subprocess.run(
        ["ruby", "runner.rb", *argv], cwd=runner_directory(runner), capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert (
        out.stderr
        == f"unknown command {json.dumps(' '.join(argv))}: describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE\n"
    )


RUBY_RUNNER = """
require_relative {protocol}
exit(RunnerProtocol.serve(
  describe: -> {{ require 'no_such_gem/client' }},
  enqueue: ->(jobs) {{ raise ArgumentError, "bad jobs: #{{jobs.size}}" }},
  worker: -> {{}},
  packages: {{ 'no_such_gem' => 'ruby-no-such-gem' }}
))
"""


@needs_ruby
def test_a_ruby_runner_without_its_library_or_inspect_says_so_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "runner.rb"
    script.write_text(RUBY_RUNNER.format(protocol=json.dumps(str(ECOSYSTEM / "kit" / "runner_protocol"))))
    (tmp_path / "jobs.jsonl").write_text('{"id": "j1", "duration_s": 0, "fail": false}\n', encoding="utf-8")
    out = subprocess.run(["ruby", str(script), "describe"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    line = "runner needs the Ruby package 'no_such_gem', which is not installed: install it (apt-get install -y "
    assert out.stderr == line + "ruby-no-such-gem)\n"
    assert missing_package(out.stderr) == out.stderr.strip()
    out = subprocess.run(["ruby", str(script), "enqueue", "jobs.jsonl"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1] == "enqueue failed: ArgumentError: bad jobs: 1"
    out = subprocess.run(["ruby", str(script), "inspect", "jobs.jsonl"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "(this runner has no inspect: protocol 1)" in out.stderr


@needs_ruby
@full_matrix_only
def test_a_reliable_fetch_that_acknowledges_before_the_handler_breaks_its_promise_under_kill9(tmp_path: Path) -> None:
    """A broken copy of sidekiq_reliable_fetch (tests/fault_runtimes/sidekiq_reliable_ack_first) empties its working
    queue before each job runs: a worker killed in a job leaves it nowhere, and the checker finds it lost."""
    if _gems_missing(RUBY_RUNNERS["sidekiq_reliable_fetch"][2]) or shutil.which("redis-server") is None:
        pytest.skip(f"Sidekiq, gitlab-sidekiq-fetcher or redis-server is not installed: {INSTALL}")
    runtime = Path(__file__).resolve().parent / "fault_runtimes" / "sidekiq_reliable_ack_first"
    run, output = lost_under_kill9(runtime, tmp_path / "report.json", 400)
    assert "BROKEN PROMISE under kill9 (round 0): lost 1 > 0" in output
    [finding] = [finding for finding in run["findings"] if finding["outcome"] == "lost"]
    assert [state["state"] for state in run["library_states"] if state["job"] == finding["job"]] == ["absent"]
    assert run["broken_promises"]
