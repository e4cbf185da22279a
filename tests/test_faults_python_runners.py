"""The Python runners of beanstalkd, saq and taskiq describe themselves; a broken copy of beanstalkd's is caught.

Each runner's ``describe`` must parse as protocol 2 where its library is installed; where it is not, the test skips
naming the install (``ci/faults.sh install`` installs all three; CI's test command installs saq and greenstalk, in
the ``faults`` extra, but not Debian's beanstalkd). The broken copy (tests/fault_runtimes/beanstalkd_delete_first)
deletes each job as soon as it reserves it, before its handler runs: under ``kill -9`` beanstalkd then has no record
of a job no run finished, which the checker must call lost, breaking the runner's quoted TTR promise. (A broken saq
copy that finished its job before the handler was tried first: saq's own start-up sweep re-runs such a job now and
then, so it was not caught every time, and a check that passes by chance is no check.)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from alkstore_faults.runner_program import RunnerError, find_runner
from tests.broken_runtimes import lost_under_kill9

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "fault_runtimes" / "beanstalkd_delete_first"
INSTALLS = {
    "beanstalkd": "apt-get install beanstalkd and pip install -e '.[faults]' (ci/faults.sh install)",
    "saq": "pip install -e '.[faults]'",
    "taskiq": "ci/faults.sh install (taskiq-redis in .venv-taskiq, the '.[faults-taskiq]' extra)",
}


@pytest.mark.parametrize("name", sorted(INSTALLS))
def test_each_runner_describes_itself_as_protocol_2(name: str) -> None:
    try:
        runner = find_runner(name)  # taskiq's names .venv-taskiq: a RunnerError where it was not made
        description = runner.describe()
    except RunnerError as error:
        pytest.skip(f"{name} cannot run here ({error}); install: {INSTALLS[name]}")
    assert runner.protocol == 2
    assert description.lease_s > 0
    assert description.promises, f"{name} quotes no promise"
    assert all(setting["doc"].startswith("https://") for setting in description.settings)


def test_a_beanstalkd_worker_that_deletes_a_job_before_its_handler_runs_is_caught(tmp_path: Path) -> None:
    pytest.importorskip("greenstalk", reason="greenstalk is not installed: pip install -e '.[faults]'")
    if shutil.which("beanstalkd") is None:
        if os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail("required here (ALKSTORE_REQUIRE=1): beanstalkd is not installed (apt-get install beanstalkd)")
        pytest.skip("beanstalkd is not installed: apt-get install beanstalkd (ci/faults.sh install does)")
    run, output = lost_under_kill9(BROKEN, tmp_path / "beanstalkd_delete_first.json", 240)
    lost = [finding for finding in run["findings"] if finding["outcome"] == "lost"]
    assert lost, output
    assert all("it has no record of the job" in finding["detail"] for finding in lost), lost
