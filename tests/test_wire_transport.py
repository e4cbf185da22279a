"""The suite reads an engine's pipes on the loop that awaits, or in the thread that waits (docs/wire-protocol.md).

Rule ids: the protocol's "Framing" section (one message a line, of any size up to
64 MiB, however the pipe cuts it; stderr is the engine's log, written freely) and
its "Requests and replies" section (replies in any order, each matched by its id).
The testee is ``tests/wire_testees/framing.py``, which frames its replies as each
test asks. The transport has no reader thread: a loop reads the pipes while it
awaits a reply, a synchronous op (``store.queue``, the handshake) reads them in
its own thread, inside a running loop or not, and a reply read by one of them for
another is handed over without anyone sleeping past it. If this fails, check
alkstore_contract/wire/process.py (``_read_stdout``, ``_take_lines``, ``_listen``,
``request_sync``) and waiters.py (``Waiter.settle``, ``Wake``).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.wire.manifest import Manifest
from alkstore_contract.wire.process import MAX_LINE_BYTES, STDERR_TAIL_CHARS, EngineFailed, EngineProcess

TESTEE = Path(__file__).resolve().parent / "wire_testees" / "framing.py"
PIPE_BYTES = 1 << 16
"""A Linux pipe's default capacity: what one write can put in it before the writer blocks."""


class Engines:
    """Starts the testee framed as a test asks; every process it started is closed after the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[EngineProcess] = []

    def start(self, mode: str, chars: int = 0, op_timeout_s: float = 10.0) -> EngineProcess:
        manifest = Manifest(
            path=self.tmp_path / "alkstore-engine.toml",
            argv=(sys.executable, str(TESTEE)),
            cwd=self.tmp_path,
            env={"ALKSTORE_FRAMING": mode, "ALKSTORE_FRAMING_CHARS": str(chars)},
            op_timeout_s=op_timeout_s,
        )
        process = EngineProcess(manifest)
        self.started.append(process)
        hello = process.request_sync("hello", {"versions": [1]}, 30)
        assert hello["engine"]["name"] == "framing"
        return process


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[Engines]:
    started = Engines(tmp_path)
    yield started
    for process in started.started:
        process.close()


async def ask(process: EngineProcess) -> Any:
    return await process.request("unavailable_reason", {})


def ask_sync(process: EngineProcess) -> Any:
    return process.request_sync("unavailable_reason", {})


def test_framing_a_reply_split_across_two_writes_is_one_reply(engines: Engines) -> None:
    """Framing: a line is a message however the pipe cuts it (here two writes 50 ms apart)."""
    process = engines.start("split")
    assert asyncio.run(ask(process)) == "#1"
    assert ask_sync(process) == "#2"


def test_framing_the_last_reply_without_its_newline_is_taken_then_the_exit(engines: Engines) -> None:
    """Framing: at the end of stdout the last line counts without its newline; then the exit ends the process."""
    process = engines.start("last_without_newline")

    async def answer_then_end() -> Any:
        answer = await ask(process)
        for _ in range(1000):  # at most 10 s: the loop goes on reading, and sees the end of stdout
            if process.ended is not None:
                break
            await asyncio.sleep(0.01)
        return answer

    assert asyncio.run(answer_then_end()) == "#1"
    assert process.ended == "exited with status 0"


@pytest.mark.parametrize("chars", [PIPE_BYTES * 16, MAX_LINE_BYTES - 100], ids=["1-MiB", "just-under-64-MiB"])
def test_framing_a_line_longer_than_a_pipe_holds_is_one_reply(engines: Engines, chars: int) -> None:
    """Framing: a line may be far longer than one read of the pipe, up to the protocol's 64 MiB."""
    process = engines.start("long", chars, op_timeout_s=60)
    assert asyncio.run(ask(process)) == "x" * chars
    assert ask_sync(process) == "x" * chars


def test_framing_a_line_past_64_mib_ends_the_process(engines: Engines) -> None:
    """Framing: a line longer than the protocol allows is a violation that fails the op in flight."""
    process = engines.start("long", MAX_LINE_BYTES + 1, op_timeout_s=60)
    with pytest.raises(EngineFailed, match="wrote a line on stdout longer than the protocol's 64 MiB"):
        asyncio.run(ask(process))


def test_requests_and_replies_out_of_order_each_reply_goes_to_its_request(engines: Engines) -> None:
    """Requests and replies: two requests in flight answered last first each get their own reply."""
    process = engines.start("reversed")

    async def both() -> list[Any]:
        return list(await asyncio.gather(ask(process), ask(process)))

    assert asyncio.run(both()) == ["#1", "#2"]


def test_requests_and_replies_a_sync_op_inside_a_loop_takes_that_loops_replies_too(engines: Engines) -> None:
    """Requests and replies: ``store.queue`` blocks its loop; the replies it reads for that loop's ops still land."""
    process = engines.start("reversed")

    async def sync_while_awaiting() -> tuple[Any, Any]:
        pending = asyncio.ensure_future(ask(process))
        await asyncio.sleep(0)  # the awaited request is written; the loop cannot read while the sync op blocks it
        answer = ask_sync(process)  # the testee answers this one first, then the awaited one
        return answer, await asyncio.wait_for(pending, 5)

    assert asyncio.run(sync_while_awaiting()) == ("#2", "#1")


def test_requests_and_replies_a_sync_op_whose_reply_a_loop_read_is_woken(
    engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests and replies: a reply that a loop in another thread read wakes the thread waiting for it at once.

    The waiting thread is made slow to look at the pipe, so the loop (awaiting in the main thread,
    its reader registered) reads each reply first; without the wake the thread would sleep until
    ``op_timeout_s``, which is 10 s here, and fail.
    """
    process = engines.start("plain")
    readers: list[str] = []
    take, wait_readable = process._take, process._wait_readable

    def recording_take(line: bytes, here: asyncio.AbstractEventLoop | None) -> str | None:
        readers.append(threading.current_thread().name)
        return take(line, here)

    def slow_wait_readable(wake: int, timeout_s: float, here: asyncio.AbstractEventLoop | None) -> None:
        time.sleep(0.05)
        wait_readable(wake, timeout_s, here)

    monkeypatch.setattr(process, "_take", recording_take)
    monkeypatch.setattr(process, "_wait_readable", slow_wait_readable)

    async def from_a_thread() -> list[Any]:
        await ask(process)  # this loop now reads the pipes
        return await asyncio.to_thread(lambda: [ask_sync(process) for _ in range(5)])

    started = time.monotonic()
    assert asyncio.run(from_a_thread()) == ["#2", "#3", "#4", "#5", "#6"]
    assert time.monotonic() - started < 5, "a sync op slept past its reply"
    assert readers[1:] == ["MainThread"] * 5, "the loop should have read every reply, to exercise the wake"


def test_requests_and_replies_loops_of_several_threads_share_one_process(engines: Engines) -> None:
    """Requests and replies: a loop in a thread (the model-based row's) and the main loop both get their replies."""
    process = engines.start("plain")

    async def main_and_thread() -> list[Any]:
        first = await ask(process)
        in_thread = await asyncio.to_thread(lambda: asyncio.run(asyncio.wait_for(ask(process), 5)))
        return [first, in_thread, await asyncio.wait_for(ask(process), 5)]

    assert asyncio.run(main_and_thread()) == ["#1", "#2", "#3"]
    assert asyncio.run(ask(process)) == "#4", "a fresh loop after the others closed"


@pytest.mark.parametrize("chars", [PIPE_BYTES * 3])
def test_framing_stderr_written_freely_never_blocks_a_reply(engines: Engines, chars: int) -> None:
    """Framing: stderr is the engine's log; more of it than a pipe holds, before each reply, blocks nothing."""
    process = engines.start("noisy", chars)
    assert asyncio.run(ask(process)) == "#1"
    assert ask_sync(process) == "#2"
    tail = process.stderr_tail()
    assert len(tail) == STDERR_TAIL_CHARS
    assert set(tail) == {"n", "\n"}


def test_framing_a_sync_op_never_answered_fails_after_its_deadline(engines: Engines) -> None:
    """Framing: a hang on a synchronous op ends the process after ``op_timeout_s``, naming the op."""
    process = engines.start("silent", op_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(EngineFailed, match=r"did not answer unavailable_reason within 0\.5 s"):
        ask_sync(process)
    assert time.monotonic() - started < 5


def test_framing_a_sync_op_in_flight_when_the_process_is_ended_fails_at_once(engines: Engines) -> None:
    """Framing: ending the process from another thread fails the synchronous op waiting on it, not at its deadline."""
    process = engines.start("silent", op_timeout_s=30)
    failures: list[str] = []

    def wait() -> None:
        with pytest.raises(EngineFailed) as failed:
            ask_sync(process)
        failures.append(str(failed.value))

    waiter = threading.Thread(target=wait)
    started = time.monotonic()
    waiter.start()
    time.sleep(0.2)
    process.end("was ended by the test")
    waiter.join(10)
    assert time.monotonic() - started < 5
    assert failures
    assert "was ended by the test while unavailable_reason was in flight" in failures[0]
