"""Each misbehaviour of a wire engine ends in a verdict of the op in flight, never a hang (docs/wire-protocol.md).

Rule ids: the protocol's "Processes" section (a crash, a hang, garbage on
stdout, an unknown id, a reply the schema rejects: the op fails with what the
engine did and its stderr tail, and the next op gets a fresh process) and its
"Handshake" section (no common version: not run here, in one line). The
testee is ``tests/wire_testees/misbehaving.js``, the Node.js engine with one
op broken. If this fails, check alkstore_contract/wire/process.py (``_take``,
``end``, ``request``) and adapter.py (``process``, ``unavailable_reason``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from alkstore_contract.clock import ManualClock
from alkstore_contract.wire.adapter import WireAdapter, load_wire_adapter
from alkstore_contract.wire.process import EngineFailed

REPO = Path(__file__).resolve().parents[1]
TESTEE = REPO / "tests" / "wire_testees" / "misbehaving.js"
NODE_MODULES = REPO / "engines_under_test" / "alkstore_node" / "node_modules" / "better-sqlite3"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not NODE_MODULES.exists(),
    reason="needs node and the Node.js engine's npm packages (bash ci/node.sh install)",
)

EXPECTED = {
    "crash": "exited with status 3",
    "hang": "did not answer claim_one within 1.0 s",
    "garbage": "wrote a line on stdout that is not JSON: 'ready!'",
    "unknown_id": "sent a message that answers no request in flight",
    "schema": "sent a reply to claim_one the protocol's schema rejects: the result of claim_one",
}


def manifest(tmp_path: Path, mode: str, op: str = "claim_one") -> Path:
    path = tmp_path / "alkstore-engine.toml"
    path.write_text(
        f'command = "node"\nargs = [{json.dumps(str(TESTEE))}]\nop_timeout_s = 1\n'
        f'env = {{ ALKSTORE_MISBEHAVE = "{mode}", ALKSTORE_MISBEHAVE_OP = "{op}" }}\n',
        encoding="utf-8",
    )
    return path


async def _claim_then_recover(adapter: WireAdapter) -> tuple[str, int]:
    location = await adapter.create_location()
    store = await adapter.open_store(location, clock=ManualClock())
    queue = store.queue("q")
    await queue.enqueue({"n": 1})
    with pytest.raises(EngineFailed) as failed:
        await queue.claim_one("w")
    await store.close()
    count = await adapter.count_stored_jobs(location)
    await adapter.drop_location(location)
    return str(failed.value), count


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_misbehaviour_fails_the_op_in_flight_and_the_next_op_gets_a_fresh_process(tmp_path: Path, mode: str) -> None:
    """Processes: the op fails naming what the engine did, with its stderr tail; the next op is served."""
    adapter = load_wire_adapter(str(manifest(tmp_path, mode)))
    try:
        started = time.monotonic()
        message, count = asyncio.run(_claim_then_recover(adapter))
        assert time.monotonic() - started < 15, "a misbehaving engine must never hold the suite up"
    finally:
        adapter.shutdown()
    assert EXPECTED[mode] in message, message
    assert f"misbehaving ({mode}) on claim_one" in message, "the failure shows the engine's stderr tail"
    assert count == 1, "the count (a fresh process) still sees the job the first process stored"


def test_no_common_version_is_one_not_run_here_line(tmp_path: Path) -> None:
    """Handshake: an engine that speaks no version the suite offers is unavailable, said in one line."""
    adapter = load_wire_adapter(str(manifest(tmp_path, "no_version")))
    try:
        reason = asyncio.run(adapter.unavailable_reason())
    finally:
        adapter.shutdown()
    assert reason is not None
    assert "\n" not in reason
    assert "offers no protocol version this suite speaks (1)" in reason
    assert "[7]" in reason


def test_a_command_that_cannot_start_is_one_not_run_here_line(tmp_path: Path) -> None:
    """Handshake: a manifest whose command does not exist makes the engine unavailable, not the run crash."""
    path = tmp_path / "alkstore-engine.toml"
    path.write_text('command = "./no-such-engine"\n', encoding="utf-8")
    adapter = load_wire_adapter(str(path))
    reason = asyncio.run(adapter.unavailable_reason())
    assert reason is not None
    assert "could not be started" in reason
    assert "\n" not in reason


def _suite(tmp_path: Path, spec: Path, *rows: str) -> subprocess.CompletedProcess[str]:
    """The suite in a subprocess rooted in ``tmp_path``, as a user runs it: not under CI's --alkstore-require."""
    selection = ["-k", " or ".join(rows)] if rows else []
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            "/dev/null",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            f"--alkstore-engine={spec}",
            *selection,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={
            key: value for key, value in os.environ.items() if not key.startswith(("ALKSTORE_REQUIRE", "PYTEST_XDIST_"))
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_crash_in_a_row_is_that_clause_failing_with_the_stderr_tail(tmp_path: Path) -> None:
    """Processes: a crash mid-op is a failure of the clause under check, and the run goes on to a verdict."""
    done = _suite(tmp_path, manifest(tmp_path, "crash", "sweep_expired"), "claim_extents", "sweep_and_retention")
    out = done.stdout + done.stderr
    assert "INTERNALERROR" not in out
    assert "Traceback (most recent call last)" not in out.split("alkstore conformance")[0]
    assert "PASSED   claim_extents" in out, out[-3000:]
    assert "FAILED   sweep_and_retention" in out, out[-3000:]
    assert "exited with status 3 while sweep_expired was in flight" in out
    assert "=> misbehaving: NOT CERTIFIED" in out
    summary = next(line for line in out.splitlines() if "exited with status 3 while sweep_expired" in line)
    assert "the last line of its stderr:" in summary or "it wrote nothing to stderr" in summary, summary
    assert "Traceback (the engine's frames)" not in out, "a wire engine's failure shows the wire adapter's frames"
    assert "The engine runs in a process of its own" in out


def test_no_common_version_in_a_run_is_one_line_and_no_row_runs(tmp_path: Path) -> None:
    """Handshake: the run reports the engine as not run here, in one line, instead of failing its rows."""
    done = _suite(tmp_path, manifest(tmp_path, "no_version"))
    out = done.stdout + done.stderr
    assert "INTERNALERROR" not in out
    lines = [line for line in out.splitlines() if "offers no protocol version" in line]
    assert lines, out[-3000:]
    assert "PASSED " not in out
    assert "FAILED " not in out
