"""The command line every Python runner serves (``alkstore_faults.runner_cli``, docs/runtime-faults.md): each
subcommand reaches the runner's own function, a jobs file is read once for every library, anything else is refused
alike; and every shipped Python runner, served by it, still describes itself as the protocol demands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alkstore_faults.runner import RUNNERS, RunnerError, find_runner
from alkstore_faults.runner_cli import USAGE, Job, serve

DESCRIPTION = {"library": "x", "version": "1"}
JOBS = [{"id": "j0001", "duration_s": 0.5, "fail": False}, {"id": "j0002", "duration_s": 1.0, "fail": True}]


class Calls:
    """What the runner's functions were called with."""

    def __init__(self) -> None:
        self.enqueued: list[list[Job]] = []
        self.workers = 0

    def enqueue(self, jobs: list[Job]) -> None:
        self.enqueued.append(jobs)

    async def enqueue_async(self, jobs: list[Job]) -> None:
        self.enqueued.append(jobs)

    def worker(self) -> None:
        self.workers += 1


def _jobs_file(tmp_path: Path) -> str:
    path = tmp_path / "jobs.jsonl"
    path.write_text("".join(json.dumps(job) + "\n" for job in JOBS) + "\n", encoding="utf-8")
    return str(path)


def test_describe_prints_the_description_as_one_line_of_json(capsys: pytest.CaptureFixture[str]) -> None:
    calls = Calls()
    assert serve(DESCRIPTION, calls.enqueue, calls.worker, ["describe"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == DESCRIPTION
    assert (calls.enqueued, calls.workers) == ([], 0)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_enqueue_hands_the_runner_every_job_of_the_file_once(tmp_path: Path, asynchronous: bool) -> None:
    calls = Calls()
    enqueue = calls.enqueue_async if asynchronous else calls.enqueue
    assert serve(DESCRIPTION, enqueue, calls.worker, ["enqueue", _jobs_file(tmp_path)]) == 0
    assert (calls.enqueued, calls.workers) == ([JOBS], 0)


def test_worker_starts_the_runners_worker() -> None:
    calls = Calls()
    assert serve(DESCRIPTION, calls.enqueue, calls.worker, ["worker"]) == 0
    assert (calls.enqueued, calls.workers) == ([], 1)


@pytest.mark.parametrize("argv", [[], ["run"], ["enqueue"], ["worker", "extra"]], ids=repr)
def test_anything_else_is_refused_with_the_usage_and_status_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    calls = Calls()
    assert serve(DESCRIPTION, calls.enqueue, calls.worker, argv) == 2
    assert capsys.readouterr().err == f"unknown command {' '.join(argv)!r}: {USAGE}\n"
    assert (calls.enqueued, calls.workers) == ([], 0)


PYTHON_RUNNERS = sorted(
    manifest.parent.name
    for manifest in RUNNERS.glob("*/runner.json")
    if json.loads(manifest.read_text(encoding="utf-8"))["language"] == "python"
)


@pytest.mark.parametrize("name", PYTHON_RUNNERS)
def test_every_python_runner_describes_itself_as_the_protocol_demands(name: str) -> None:
    try:
        runner = find_runner(name)
    except RunnerError as exc:  # a venv of its own ({python:celery}) that is not made here
        pytest.skip(str(exc))
    try:
        description = runner.describe()
    except RunnerError as exc:
        if "PackageNotFoundError" in str(exc):
            pytest.skip(f"{name}'s library is not installed: bash ci/faults.sh install")
        raise
    assert description.faults
    assert all(setting["doc"] for setting in description.settings)
