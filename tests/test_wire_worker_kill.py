"""kill -9 of a worker process kills its engine processes at once (docs/wire-protocol.md, "Processes").

Rule (P2, P3 through the wire): the multi-process rows kill worker processes
of the suite with SIGKILL; each engine process a worker started must die with
it, mid-op, not finish its work as an orphan, or those rows would judge a
gentler crash than they claim. If this fails, check ``_pdeathsig`` in
alkstore_contract/wire/process.py (Linux ``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NODE_ENGINE = REPO / "engines_under_test" / "alkstore_node"
TESTEE = REPO / "tests" / "wire_testees" / "misbehaving.js"
WORKER = """
import sys, time
from alkstore_contract.wire.adapter import load_wire_adapter
adapter = load_wire_adapter(sys.argv[1])
print(adapter.process().pid, flush=True)
time.sleep(600)
"""

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's"),
    pytest.mark.skipif(
        shutil.which("node") is None or not (NODE_ENGINE / "node_modules" / "better-sqlite3").exists(),
        reason="needs node and the Node.js engine's npm packages (bash ci/node.sh install)",
    ),
]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text(encoding="utf-8")


def test_the_engine_of_a_worker_killed_with_sigkill_dies_with_it(tmp_path: Path) -> None:
    """An engine still busy when its worker dies (it outlives its stdin, ``linger``) is killed, not orphaned."""
    manifest = tmp_path / "alkstore-engine.toml"
    manifest.write_text(
        f'command = "node"\nargs = ["{TESTEE}"]\nenv = {{ ALKSTORE_MISBEHAVE = "linger" }}\n', encoding="utf-8"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(manifest)], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        assert worker.stdout is not None
        engine_pid = int(worker.stdout.readline())
        assert _alive(engine_pid)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        deadline = time.monotonic() + 5
        while _alive(engine_pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(engine_pid), "the engine outlived its worker's SIGKILL"
    finally:
        worker.kill()
        worker.wait()
