"""A third party's view: alkstore and an engine installed from wheels into a fresh venv, certified from an empty dir.

The checkout is used only to build two wheels, alkstore's and the example
engine's (``examples/alkstore_example_dict``). They are installed, not
editable, into a new virtual environment, and every command then runs in an
empty directory with a clean environment: no conftest, no ini file, no
``PYTHONPATH``, no ``--pyargs``. So this is the one test that proves the
packaging itself: the ``pytest11`` and ``alkstore.engines`` entry points, the
anchor file and the report schema shipped inside the wheel.

It takes about a minute (two wheel builds, a venv, two runs of the whole
suite) and runs in the normal test run on purpose. The venv is built once per
run: once per module, and shared by pytest-xdist workers behind a file lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_contract.suite.row import SUITE_VERSION, all_rows

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "alkstore_example_dict"
ENGINE = "example-dict"
TIMEOUT_S = 600
SKIPPED_FOR_CAPABILITY = {
    "durability": "engine 'example-dict' does not declare 'durable' (P3), which row durability needs",
    "crash_recovery": "engine 'example-dict' does not declare 'multi_process' (P2), which row crash_recovery needs",
    "network_faults": "engine 'example-dict' does not declare 'networked' (N1–N6, T3), which row network_faults needs",
    "network_history": (
        "engine 'example-dict' does not declare 'networked' (N1–N6, T3), which row network_history needs"
    ),
    "server_clock": "engine 'example-dict' does not declare 'networked' (N1–N6, T3), which row server_clock needs",
    "unique_keys": "engine 'example-dict' does not declare 'unique_keys' (K1–K4), which row unique_keys needs",
    "transactional_enqueue": (
        "engine 'example-dict' does not declare 'transactional_enqueue' (W1–W4), which row transactional_enqueue needs"
    ),
}
"""The rows the example's three capabilities leave out, and the skip reason each must give."""


def _clean_env() -> dict[str, str]:
    """This process's environment without anything that would steer the child's Python or pytest."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    return {
        key: value
        for key, value in os.environ.items()
        if key not in dropped and not key.startswith(("PYTEST_", "ALKSTORE_", "HYPOTHESIS_"))
    }


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _output(result: subprocess.CompletedProcess[str]) -> str:
    """What a failed assertion should show: the command, its exit code and the end of its output."""
    return (
        f"$ {' '.join(map(str, result.args))}\nexit code {result.returncode}\n"
        f"--- stdout (last 4000 characters)\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}"
    )


def _checked(command: list[str], cwd: Path) -> None:
    result = _run(command, cwd)
    assert result.returncode == 0, _output(result)


@dataclass(frozen=True)
class FreshVenv:
    """The third party's virtual environment."""

    path: Path

    def run(self, tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run one of the venv's console scripts (``pytest``, ``alkstore``, ``python``) in ``cwd``."""
        return _run([str(self.path / "bin" / tool), *args], cwd)


def _build(root: Path) -> FreshVenv:
    """Build both wheels, make a venv, install the wheels (their dependencies come from the package index).

    The venv gets no pip of its own: this venv's pip installs into it (``pip --python``), which spares
    ensurepip's copy of pip, which nothing here would run. The wheels are built by the hatchling of this
    venv (the test extra has it) rather than one pip would install into a build environment of its own.
    """
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(wheels)]
    _checked([*build, str(REPO), str(EXAMPLE)], root)
    venv = FreshVenv(root / "venv")
    _checked([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv.path)], root)
    python = str(venv.path / "bin" / "python")
    _checked([*pip, "--python", python, "install", "--quiet", *map(str, wheels.glob("*.whl"))], root)
    return venv


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """One venv for the module; pytest-xdist workers share the first one built, behind a file lock."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return _build(tmp_path_factory.mktemp("third-party"))
    root = tmp_path_factory.getbasetemp().parent / "third-party"
    root.mkdir(exist_ok=True)
    with (root / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = root / "ready"
        if not ready.exists():
            _build(root)
            ready.touch()
    return FreshVenv(root / "venv")


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """Where the third party stands: a directory with nothing in it."""
    assert not any(tmp_path.iterdir())
    return tmp_path


def _example_version() -> str:
    project: dict[str, Any] = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def _valid_report(venv: FreshVenv, path: Path) -> dict[str, Any]:
    """The report at ``path``, checked against the schema shipped in the installed wheel."""
    found = venv.run(
        "python", "-c", "from alkstore_contract.report.build import SCHEMA_PATH; print(SCHEMA_PATH)", cwd=path.parent
    )
    assert found.returncode == 0, _output(found)
    schema = json.loads(Path(found.stdout.strip()).read_text(encoding="utf-8"))
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    return report


def _assert_certified(report: dict[str, Any]) -> None:
    """Every row reported; every required row passed; the capability rows out of reach skipped, saying why."""
    assert report["suite_version"] == SUITE_VERSION
    (engine,) = report["engines"]
    assert engine["name"] == ENGINE
    assert engine["spec"] == ENGINE
    assert engine["version"] == _example_version()
    assert engine["capabilities"] == ["injectable_clock", "release", "shared_location"]
    assert engine["clock"] == "manual"
    assert (engine["certified"], engine["not_certified_because"]) == (True, [])
    rows = {row["row"]: row for row in engine["rows"]}
    assert list(rows) == [row.name for row in all_rows()]
    for name, row in rows.items():
        if name in SKIPPED_FOR_CAPABILITY:
            assert (row["outcome"], row["reason"], row["required"]) == ("skipped", SKIPPED_FOR_CAPABILITY[name], False)
        else:
            assert row["outcome"] == "passed", row


def test_the_packages_come_from_the_wheels_not_the_checkout(venv: FreshVenv, empty_dir: Path) -> None:
    script = "import alkstore_contract as a, alkstore_example_dict as b; print(a.__file__); print(b.__file__)"
    result = venv.run("python", "-c", script, cwd=empty_dir)
    assert result.returncode == 0, _output(result)
    for module_file in result.stdout.split():
        assert Path(module_file).is_relative_to(venv.path), f"{module_file} is not installed in {venv.path}"


def test_pytest_certifies_the_engine_from_an_empty_directory(venv: FreshVenv, empty_dir: Path) -> None:
    """The user's first screen: certified, with no pytest-asyncio deprecation warning and no ``.hypothesis/`` left.

    If the warning or the directory shows, check ``pytest_configure_quiet_asyncio`` in
    alkstore_contract/suite/plugin.py and ``_hypothesis_home_outside_cwd`` in
    alkstore_contract/suite/rows/model_based/runner.py.
    """
    result = venv.run(
        "pytest",
        f"--alkstore-engine={ENGINE}",
        "--alkstore-report=r.json",
        "-W",
        "error::pytest.PytestDeprecationWarning",
        cwd=empty_dir,
    )
    assert result.returncode == 0, _output(result)
    assert "Warning" not in result.stdout + result.stderr, _output(result)
    assert not (empty_dir / ".hypothesis").exists()
    assert f"collected {len(all_rows())} items" in result.stdout, _output(result)
    assert f"=> {ENGINE}: CERTIFIED" in result.stdout, _output(result)
    _assert_certified(_valid_report(venv, empty_dir / "r.json"))


def test_alkstore_certify_writes_a_certified_report_that_renders(venv: FreshVenv, empty_dir: Path) -> None:
    result = venv.run("alkstore", "certify", ENGINE, "--report", "r2.json", cwd=empty_dir)
    assert result.returncode == 0, _output(result)
    _assert_certified(_valid_report(venv, empty_dir / "r2.json"))
    rendered = venv.run("alkstore", "report", "r2.json", "--html", "m.html", "--markdown", "m.md", cwd=empty_dir)
    assert rendered.returncode == 0, _output(rendered)
    assert "| **verdict** | | | **certified** [" in (empty_dir / "m.md").read_text(encoding="utf-8")
    assert "<td class='verdict'" in (empty_dir / "m.html").read_text(encoding="utf-8")


def test_without_an_engine_pytest_collects_nothing_from_alkstore(venv: FreshVenv, empty_dir: Path) -> None:
    result = venv.run("pytest", cwd=empty_dir)
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, _output(result)
    assert "collected 0 items" in result.stdout, _output(result)
    assert "no tests ran" in result.stdout, _output(result)


def test_an_unknown_engine_names_the_installed_ones(venv: FreshVenv, empty_dir: Path) -> None:
    result = venv.run("pytest", "--alkstore-engine=nope", cwd=empty_dir)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, _output(result)
    assert "installed engines: example-dict, mem, pgqueuer, postgres, procrastinate, sqlite" in result.stderr, _output(
        result
    )
