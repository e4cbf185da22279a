"""The CI scripts and the GitHub workflow, held to what they must do on a machine they do not own.

- ``ci/postgres.sh`` installs Postgres with ``apt-get``: directly as root,
  through ``sudo -n`` otherwise (a GitHub runner is the user ``runner`` with
  passwordless sudo), and with one clear line when neither is possible. The
  script runs with ``PATH`` holding only stubs for ``id``, ``sudo`` and
  ``apt-get`` (and no ``psql``, so it goes to install at once); the stubs log
  their arguments and exit 1, which ends the script right there.
- ``.github/workflows/ci.yml``: Postgres only in the jobs that use it, no
  second run of the contract suite in the tests job, ``sudo`` on every
  ``apt-get``, one cell that runs the suite from an empty directory as a user
  does, and a header that says which clock modes each engine runs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
POSTGRES_SH = REPO / "ci" / "postgres.sh"
SUITE_SH = REPO / "ci" / "suite.sh"
WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
BASH = "/bin/bash"


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!{BASH}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


def _install_attempt(tmp_path: Path, *, uid: int, with_sudo: bool) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ci/postgres.sh where psql is missing; what it printed, and what the stubs were called with."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    calls = tmp_path / "calls.log"
    _stub(stubs, "id", f'[ "$1" = -u ] && echo {uid}')
    _stub(stubs, "apt-get", f'echo "apt-get $*" >> {calls}; exit 1')
    if with_sudo:
        _stub(stubs, "sudo", f'echo "sudo $*" >> {calls}; exit 1')
    env = {"PATH": str(stubs), "ALKSTORE_PG_STATE_DIR": str(tmp_path / "state"), "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [BASH, str(POSTGRES_SH)], env=env, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path
    )
    return result, calls.read_text(encoding="utf-8") if calls.exists() else ""


def test_not_root_installs_through_sudo(tmp_path: Path) -> None:
    result, calls = _install_attempt(tmp_path, uid=1001, with_sudo=True)
    assert result.returncode != 0
    assert calls.splitlines() == ["sudo -n apt-get update"]
    assert result.stdout == ""


def test_root_installs_directly(tmp_path: Path) -> None:
    result, calls = _install_attempt(tmp_path, uid=0, with_sudo=True)
    assert result.returncode != 0
    assert calls.splitlines() == ["apt-get update"]


def test_not_root_without_sudo_says_so_and_runs_nothing(tmp_path: Path) -> None:
    result, calls = _install_attempt(tmp_path, uid=1001, with_sudo=False)
    assert result.returncode != 0
    assert calls == ""
    assert "not root and no sudo" in result.stderr


def _workflow() -> str:
    return WORKFLOW.read_text(encoding="utf-8")


def _jobs() -> dict[str, str]:
    """Each job's text, by job id (the workflow's two-space-indented keys under ``jobs:``)."""
    body = _workflow().split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([A-Za-z0-9_-]+):\n", body, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _header() -> str:
    return "".join(line for line in _workflow().splitlines(keepends=True) if line.startswith("#"))


def test_postgres_starts_only_where_it_is_used() -> None:
    jobs = _jobs()
    with_service = sorted(name for name, text in jobs.items() if "services:" in text)
    assert with_service == ["suite-postgres"]
    assert "postgres" not in re.search(r"engine: \[(.*)\]", jobs["suite"]).group(1)  # type: ignore[union-attr]
    assert "bash ci/suite.sh postgres" in jobs["suite-postgres"]
    assert "ci/postgres.sh" in jobs["tests"]


def test_the_tests_job_does_not_run_the_suite_again() -> None:
    tests_job = _jobs()["tests"]
    assert "--alkstore-engine" not in tests_job
    assert "ci/test.sh" not in tests_job
    assert "ci/suite.sh" not in tests_job


def test_every_apt_get_in_the_workflow_uses_sudo() -> None:
    lines = [
        line.strip() for line in _workflow().splitlines() if "apt-get" in line and not line.lstrip().startswith("#")
    ]
    assert lines
    for line in lines:
        assert line.startswith("sudo "), line


def test_the_tests_job_installs_psql_and_the_server_binaries_before_using_them() -> None:
    tests_job = _jobs()["tests"]
    install = tests_job.index("apt-get install")
    assert "postgresql-client" in tests_job[install:].splitlines()[0]
    assert " postgresql " in tests_job[install:].splitlines()[0]
    assert install < tests_job.index("bash ci/postgres.sh")


def test_one_cell_runs_the_suite_from_an_empty_directory_as_a_user_does() -> None:
    user_job = _jobs()["suite-as-a-user"]
    assert 'cd "$(mktemp -d)" && pytest --alkstore-engine=sqlite' in user_job
    assert "pip install ." in user_job
    assert "pip install -e" not in user_job


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_the_header_matches_the_clock_modes_suite_sh_runs(engine: str) -> None:
    script = SUITE_SH.read_text(encoding="utf-8")
    assert 'if [ "$engine" != mem ]' in script, "ci/suite.sh changed which engines run the system clock"
    header = " ".join(_header().split())
    assert "mem under the manual clock only" in header
    assert "both clock modes" in header
    assert "each cell runs both" not in header.lower()
    assert engine in header
