"""The command line every Python runner serves (``alkstore_faults.runner_cli``, docs/runtime-faults.md): each
subcommand reaches the runner's own function, a jobs file is read once for every library, anything else is refused
alike; and every shipped Python runner, served by it, still describes itself as the protocol demands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from alkstore_faults.runner_cli import USAGE, Job, State, missing_package, serve
from alkstore_faults.runner_program import RunnerError, find_runner, shipped_runners

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


def _states(jobs: list[Job]) -> list[State]:
    return [{"job": job["id"], "state": "completed", "library_state": "done"} for job in jobs]


async def _states_async(jobs: list[Job]) -> list[State]:
    return _states(jobs)


@pytest.mark.parametrize("inspect", [_states, _states_async], ids=["sync", "async"])
def test_inspect_prints_one_state_a_line_for_every_job(
    tmp_path: Path, inspect: object, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = Calls()
    assert serve(DESCRIPTION, calls.enqueue, calls.worker, ["inspect", _jobs_file(tmp_path)], inspect=inspect) == 0  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["job"] for line in lines] == ["j0001", "j0002"]


def test_inspect_of_a_runner_without_one_is_refused_as_protocol_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = Calls()
    assert serve(DESCRIPTION, calls.enqueue, calls.worker, ["inspect", _jobs_file(tmp_path)]) == 2
    assert "(this runner has no inspect: protocol 1)" in capsys.readouterr().err


def test_a_missing_package_is_one_line_naming_it(tmp_path: Path) -> None:
    """A runner whose ``version()`` lookup (or import) finds no package fails in one line naming the package."""
    from importlib.metadata import PackageNotFoundError

    assert "'no-such-lib'" in (missing_package(PackageNotFoundError("no-such-lib")) or "")
    assert missing_package(ValueError("x")) is None
    script = tmp_path / "runner.py"
    script.write_text(
        "from importlib.metadata import version\n"
        "from alkstore_faults.runner_cli import serve\n"
        "serve({'version': version('no-such-lib')}, print, print)\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script), "describe"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "runner needs the Python package 'no-such-lib'" in done.stderr


PYTHON_RUNNERS = sorted(
    name
    for name, directory in shipped_runners().items()
    if json.loads((directory / "runner.json").read_text(encoding="utf-8"))["language"] == "python"
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
        if "runner needs the Python package" in str(exc):
            pytest.skip(f"{name}'s library is not installed: bash ci/faults.sh install")
        raise
    assert description.faults
    assert all(setting["doc"] for setting in description.settings)


def test_an_install_without_the_runners_says_where_they_are(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """From a wheel, ``ecosystem/`` is absent: one line says the shipped runners run from a checkout or an
    unpacked sdist (docs/runtime-faults.md, "Where the code lives"), never "known runners: none"."""
    monkeypatch.setattr("alkstore_faults.runner_program.ECOSYSTEM", tmp_path / "absent")
    with pytest.raises(RunnerError, match=r"live in a checkout of alkstore .* unpacked sdist") as raised:
        find_runner("huey")
    assert "known runners" not in str(raised.value)
    assert "\n" not in str(raised.value)
