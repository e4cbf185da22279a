"""pytester's ``runpytest_subprocess``, in a process forked from a server that has imported pytest already.

Why: the plugin's own tests run pytest as a user would, in a process of its
own, some thirty times; a fresh interpreter spends about a third of a CPU
second importing pytest, Hypothesis and asyncpg before its run starts, most of
what such a short run costs. A child of ``tests/forkserver.py`` starts with
them imported and is still a process of its own.

The run is the one ``runpytest_subprocess`` makes: the same arguments, with a
``--basetemp`` of its own under the test's directory; the test's working
directory and this process's environment (as pytester and the test set them);
stdin closed; stdout and stderr apart, read back into a ``RunResult``. What
differs is only how the process starts: ``pytest.main`` in a fork, not
``python -m pytest`` (``sys.argv[0]`` is ``pytest``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import pytest

from tests.forkserver import ForkServer

REPO = Path(__file__).resolve().parents[1]


@cache
def _server() -> ForkServer:
    """This process's fork server, started by its first run; ``PYTHONPATH`` is each run's own, not the server's."""
    return ForkServer({key: value for key, value in os.environ.items() if key != "PYTHONPATH"}, REPO)


def runpytest_forked(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytester.runpytest_subprocess(*args)``, the process forked from ``_server()``; its output written here too.

    Written to this test's stdout and stderr as pytester does, so a failing test shows what the run said.
    """
    cwd = Path.cwd()
    basetemp = tempfile.mkdtemp(prefix="runpytest-", dir=pytester.path)
    output, errors = pytester.path / "stdout", pytester.path / "stderr"
    started = time.monotonic()
    code = _server().run([f"--basetemp={basetemp}", *args], env=dict(os.environ), cwd=cwd, output=output, errors=errors)
    duration = time.monotonic() - started
    out = output.read_text(encoding="utf-8", errors="replace")
    err = errors.read_text(encoding="utf-8", errors="replace")
    sys.stdout.write(f"running: pytest {' '.join(args)} (forked) in {cwd}\n{out}")
    sys.stderr.write(err)
    return pytest.RunResult(code, out.splitlines(), err.splitlines(), duration)
