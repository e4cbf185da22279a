"""One process that imports pytest and the suite's libraries once, and forks a child for each pytest run asked of it.

Why: the mutant catalog runs each mutant in a pytest process of its own
(``tests/mutants/runner.py`` says why), and the plugin's own tests run pytest
in a subprocess as a user would (``tests/forked_pytester.py``). A fresh
interpreter spends about a third of a CPU second importing pytest, Hypothesis,
asyncpg and the rest before the first row runs: over a hundred mutants and a
few dozen plugin runs, that was a fifth of their CPU time. A child forked from a
process that has already imported them starts with them loaded, and is still a
process of its own: whatever the run patches dies with it, as it did with a
fresh interpreter.

Only third-party libraries are imported ahead (``PRELOADED``); alkstore's own
modules, the engines and the mutant are imported in the child, after pytest
has set up its assertion rewriting, in the order a fresh process imports them.
The child's ``sys.path`` is what ``python -m pytest`` started there would
have: its working directory, then the request's ``PYTHONPATH``, then the
interpreter's own entries.

The protocol, on the server's stdin and stdout, one JSON object a line: a
request ``{"args": [...], "env": {...}, "cwd": "...", "output": "...", "errors": "..."}``
runs ``pytest.main(args)`` in a child with that environment and working
directory, its stdout in the file ``output`` and its stderr in ``errors``
(in ``output`` too when ``errors`` is absent); the reply is ``{"exit": N}``,
the child's exit status (negative: killed by that signal). The server serves
one request at a time and ends at the end of its stdin.

Run as ``python -m tests.forkserver``; ``ForkServer`` starts and talks to one.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import IO, Any

PRELOADED = (
    "pytest",
    "_pytest.python",
    "_pytest.fixtures",
    "_pytest.doctest",
    "_pytest.legacypath",
    "hypothesis",
    "hypothesis.stateful",
    "hypothesis.strategies",
    "asyncpg",
    "aiosqlite",
    "asyncio",
    "sqlite3",
)
"""Third-party and standard-library modules a mutant's run imports; none of them starts a thread on import."""


def _search_path(pythonpath: str | None) -> list[str]:
    """The entries ``PYTHONPATH`` puts after the working directory, as Python makes them (an empty one is ``.``)."""
    return [os.path.abspath(entry) for entry in pythonpath.split(os.pathsep)] if pythonpath else []


def _redirect(path: str, *descriptors: int) -> None:
    """Point each of ``descriptors`` at the file ``path``, created or emptied."""
    opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for descriptor in descriptors:
        os.dup2(opened, descriptor)
    os.close(opened)


def _child(request: dict[str, Any], interpreter_path: list[str]) -> None:
    """Run pytest as the request says, then leave the process with its exit status: never returns.

    ``interpreter_path``: the server's ``sys.path`` but its working directory and its ``PYTHONPATH`` (the
    standard library, site-packages), which the child's own working directory and ``PYTHONPATH`` go in front of.
    """
    code = 3
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = [request["cwd"], *_search_path(os.environ.get("PYTHONPATH")), *interpreter_path]
        if "errors" in request:
            _redirect(request["output"], 1)
            _redirect(request["errors"], 2)
        else:
            _redirect(request["output"], 1, 2)
        stdin = os.open(os.devnull, os.O_RDONLY)  # the server's stdin carries the requests: not the child's
        os.dup2(stdin, 0)
        os.close(stdin)
        sys.argv = ["pytest", *request["args"]]
        import pytest

        code = int(pytest.main(request["args"]))
    except BaseException:
        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()  # what the run registered (a throwaway Postgres cluster's stop) runs, as at exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Answer each request line with the exit status of a child forked to run it."""
    for module in PRELOADED:
        importlib.import_module(module)
    interpreter_path = sys.path[1 + len(_search_path(os.environ.get("PYTHONPATH"))) :]
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, interpreter_path)
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        replies.flush()


class ForkServer:
    """A running server (started on first use) and the one request at a time it answers."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self._env = env
        self._cwd = cwd
        self._process: subprocess.Popen[str] | None = None
        atexit.register(self.close)

    def run(self, args: list[str], *, env: dict[str, str], cwd: Path, output: Path, errors: Path | None = None) -> int:
        """``pytest.main(args)`` in a forked child; its exit status, its stdout in ``output``, its stderr in ``errors``.

        Without ``errors``, stderr goes to ``output`` as well.
        """
        process = self._started()
        assert process.stdin is not None
        assert process.stdout is not None
        request = {"args": args, "env": env, "cwd": str(cwd), "output": str(output)}
        if errors is not None:
            request["errors"] = str(errors)
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        reply = process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the fork server exited with status {process.wait()}; see its stderr above")
        status: int = json.loads(reply)["exit"]
        return status

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.forkserver"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
                text=True,
            )
        return self._process

    def close(self) -> None:
        """End the server: it finishes at the end of its stdin."""
        if self._process is not None and self._process.stdin is not None:
            self._process.stdin.close()
            self._process.wait()
            self._process = None


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
