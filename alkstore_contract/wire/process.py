"""One engine process: its pipes, the requests in flight, and what ends it.

Part of the wire.

No thread of the suite's own reads the engine. A row awaits a reply on its
event loop, and that loop reads the engine's stdout and stderr itself
(``add_reader`` on the pipes), so a reply is read, checked and resolved in the
thread that awaits it: no hop from a reader thread through a futex to the
loop, which cost most of a no-op round trip (docs/benchmarks.md, "The wire
protocol"). One process outlives many loops (each row runs ``asyncio.run`` of
its own, the model-based row a loop in a thread besides), which is why the
pipes stay ``subprocess.Popen``'s and each loop that awaits a reply registers
on them, rather than one loop owning them as ``asyncio``'s subprocess
transports would. The synchronous ops (the handshake, ``store.queue``, a
networked engine's addresses) read the pipes in the calling thread until
their reply comes, with or without a loop running there.

Every line on stdout is checked — JSON, a reply to a request in flight,
accepted by the schema — and anything else ends the process: what it did is
the error of every op in flight, with the tail of its stderr, and a process
that never answers is ended after the manifest's ``op_timeout_s``. So an
engine that misbehaves costs one op a verdict, never the run a hang.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import itertools
import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from alkstore_contract.wire.errors import contract_error
from alkstore_contract.wire.manifest import Manifest
from alkstore_contract.wire.schema import reply_fault
from alkstore_contract.wire.waiters import Waiter, Wake, resolve, running_loop

STDERR_TAIL_CHARS = 4000
"""How much of an engine's log a failure shows."""
EXIT_GRACE_S = 5.0
"""How long an engine may take to exit once its stdin is closed (or its stdout), before SIGKILL."""
STDERR_DRAIN_S = 2.0
"""How long an ended engine's last stderr may take to arrive, so a failure shows what the engine logged."""
READ_CHUNK = 1 << 16
"""The most one read of a pipe takes (a pipe's default capacity on Linux)."""
MAX_LINE_BYTES = 64 << 20
"""The longest line the protocol allows ("Framing"): past it a line is an engine that never ends one."""
_PR_SET_PDEATHSIG = 1
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""One encoder for every request: ``json.dumps`` with options builds a new one per call."""
TRACE_ENV = "ALKSTORE_WIRE_TRACE"
"""When set, every message of every engine process is appended to the file it names, one JSON line each:
``{"pid": …, "direction": "sent" | "received", "message": …}`` (a recorded session; worker processes too)."""


class EngineFailed(Exception):
    """The engine process crashed, hung, broke the protocol or cannot start: the op in flight fails with this."""


def _pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the engine gets SIGKILL when the thread that started it dies (a worker killed with kill -9).

    It only calls ``prctl``, which takes no lock, so it is safe between fork and exec
    even while other threads of the suite run.
    """
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform.startswith("linux") else None


class EngineProcess:
    """A running engine: send requests, await or wait for replies, end it."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._ids = itertools.count()
        self._pending: dict[int, Waiter] = {}
        self._lock = threading.Lock()
        """Guards ``_pending``, ``ended``, ``_listening`` and ``_stderr``."""
        self._writing = threading.Lock()
        """Held while a request is written, so two threads' requests never interleave on stdin."""
        self._reading = threading.Lock()
        """Held by whoever reads stdout (a loop's callback or a synchronous caller): ``_unread`` is theirs then."""
        self._unread = bytearray()
        self._stderr = bytearray()
        self._stderr_open = True
        self._listening: set[asyncio.AbstractEventLoop] = set()
        self.ended: str | None = None
        """Why this process is no longer usable (``None`` while it serves)."""
        try:
            self._process = subprocess.Popen(
                manifest.argv,
                cwd=manifest.cwd,
                env={**os.environ, **manifest.env},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=_pdeathsig if _LIBC is not None else None,
            )
        except OSError as exc:
            raise EngineFailed(
                f"the engine could not be started: {' '.join(manifest.argv)} in {manifest.cwd}: {exc}"
            ) from None
        self.pid = self._process.pid
        self._in, self._out, self._err = (
            _fileno(pipe) for pipe in (self._process.stdin, self._process.stdout, self._process.stderr)
        )
        os.set_blocking(self._out, False)
        os.set_blocking(self._err, False)

    # -- what the engine wrote

    def stderr_tail(self) -> str:
        with self._lock:
            text = bytes(self._stderr).decode(errors="replace")
        return text or "(nothing)"

    def _read_stderr(self) -> bool:
        """Keep what the engine logged since the last read; False once its stderr is closed."""
        with self._lock:
            if not self._stderr_open:
                return False
            try:
                chunk = os.read(self._err, READ_CHUNK)
            except BlockingIOError:
                return True
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL_CHARS)]
            self._stderr_open = bool(chunk)
            return self._stderr_open

    def _read_stdout(self, here: asyncio.AbstractEventLoop | None) -> str | None:
        """Take the replies that arrived; what ended the process (a bad line, the end of stdout), or None."""
        with self._reading:
            try:
                chunk = os.read(self._out, READ_CHUNK)
            except BlockingIOError:
                return None
            searched = len(self._unread)
            self._unread += chunk
            problem = self._take_lines(here, searched=searched, final=not chunk)
        if problem is not None or chunk:
            return problem
        try:
            code = self._process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            return "closed its stdout"
        return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"

    def _take_lines(self, here: asyncio.AbstractEventLoop | None, *, searched: int, final: bool) -> str | None:
        """Each whole line of ``_unread`` in turn (at the end of stdout, the last one without its newline too).

        ``searched``: how much of ``_unread`` is known to hold no newline, so a long line arriving a
        chunk at a time is scanned once, not once per chunk.
        """
        start = 0
        while (newline := self._unread.find(b"\n", searched)) >= 0 or (final and start < len(self._unread)):
            end = len(self._unread) if newline < 0 else newline + 1
            if (newline if newline >= 0 else end) - start > MAX_LINE_BYTES:
                return _overlong(self._unread[start : start + 1000])
            line, start, searched = bytes(self._unread[start:end]), end, end
            problem = self._take(line, here)
            if problem is not None:
                return problem
        del self._unread[:start]
        return _overlong(self._unread) if len(self._unread) > MAX_LINE_BYTES else None

    def _take(self, line: bytes, here: asyncio.AbstractEventLoop | None) -> str | None:
        """Resolve the request ``line`` answers; what is wrong with it, or None."""
        try:
            message = json.loads(line)
        except ValueError:
            return f"wrote a line on stdout that is not JSON: {_cut(line)}"
        _record(self.pid, "received", message)
        reply_to = message.get("in_reply_to") if isinstance(message, dict) else None
        if not isinstance(reply_to, int):
            return f"sent a message that answers no request: {_cut(line)}"
        with self._lock:
            waiter = self._pending.get(reply_to)
        if waiter is None:
            return f"sent a message that answers no request in flight: {_cut(line)}"
        problem = reply_fault(message, waiter.op)
        if problem is not None:
            return f"sent a reply to {waiter.op} the protocol's schema rejects: {problem}: {_cut(line)}"
        with self._lock:
            if self._pending.pop(reply_to, None) is None:  # ``end`` failed it meanwhile, in another thread
                return None
        if message["type"] == "ok":
            waiter.settle(message["result"], None, here)
        else:
            waiter.settle(None, _ErrorReply(message["error"]), here)
        return None

    # -- reading on an event loop

    def _listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have ``loop`` read the pipes from now on (a loop registers once; closed loops are forgotten)."""
        with self._lock:
            if loop in self._listening or self.ended is not None:
                return
            self._listening = {known for known in self._listening if not known.is_closed()} | {loop}
            stderr_open = self._stderr_open
        loop.add_reader(self._out, self._on_stdout, loop)
        if stderr_open:
            loop.add_reader(self._err, self._on_stderr, loop)

    def _on_stdout(self, loop: asyncio.AbstractEventLoop) -> None:
        problem = self._read_stdout(loop)
        if problem is not None:
            self.end(problem)

    def _on_stderr(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._read_stderr():
            loop.remove_reader(self._err)

    def _stop_listening(self) -> None:
        """Take the pipes off every loop that reads them (before the process's pipes can close)."""
        with self._lock:
            loops, self._listening = self._listening, set()
        here = running_loop()
        for loop in loops:
            if loop.is_closed():
                continue
            if loop is here or not loop.is_running():
                self._unregister(loop)
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._unregister, loop)

    def _unregister(self, loop: asyncio.AbstractEventLoop) -> None:
        if not loop.is_closed():
            loop.remove_reader(self._out)
            loop.remove_reader(self._err)

    # -- requests

    def _send(self, op: str, fields: dict[str, Any], waiter: Waiter) -> None:
        """Write one request; ``waiter`` gets its reply, or the process's end."""
        with self._lock:
            ended = self.ended
            if ended is None:
                request_id = next(self._ids)
                self._pending[request_id] = waiter
        if ended is not None:
            resolve(waiter.future, None, EngineFailed(ended))
            return
        message = {"id": request_id, "type": op, **fields}
        _record(self.pid, "sent", message)
        data = memoryview((_encode(message) + "\n").encode())
        try:
            with self._writing:
                while data:
                    data = data[os.write(self._in, data) :]
        except OSError:
            self.end("closed its stdin (it stopped reading requests)")

    async def request(self, op: str, fields: dict[str, Any]) -> Any:
        """Send ``op`` and await its result; a hang ends the process after the manifest's ``op_timeout_s``."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._send(op, fields, Waiter(op, future, loop))
        self._listen(loop)
        # A timer, not ``asyncio.wait_for``, which costs a task switch more on every reply.
        timer = loop.call_later(self.manifest.op_timeout_s, resolve, future, None, _Hung())
        try:
            with self._answer_to(op):
                return await future
        except _Hung:
            self.end(f"did not answer {op} within {self.manifest.op_timeout_s} s (op_timeout_s)")
            raise EngineFailed(self._why(op)) from None
        finally:
            timer.cancel()

    def request_sync(self, op: str, fields: dict[str, Any], timeout_s: float | None = None) -> Any:
        """``request`` for a caller that cannot await (the handshake, ``store.queue``), inside a loop or not.

        The caller reads the pipes itself until its reply comes: a loop running in this thread is
        blocked meanwhile, so it could not read them, and any reply this read takes for a request of
        that loop is resolved on it all the same.
        """
        limit = self.manifest.op_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with contextlib.closing(Wake()) as wake, self._answer_to(op):
            self._send(op, fields, Waiter(op, future, wake=wake))
            here = running_loop()
            while not future.done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.end(f"did not answer {op} within {limit} s")
                    resolve(future, None, EngineFailed(str(self.ended)))
                    break
                self._wait_readable(wake.fd, remaining, here)
            return future.result(0)

    @contextlib.contextmanager
    def _answer_to(self, op: str) -> Iterator[None]:
        """What the caller of ``op`` sees of a reply gone wrong: an error reply as the contract's exception it
        names, the engine's end as ``EngineFailed`` saying why. ``request`` and ``request_sync`` both wait in it."""
        try:
            yield
        except _ErrorReply as reply:
            raise reply.error() from None
        except EngineFailed:
            raise EngineFailed(self._why(op)) from None

    def _wait_readable(self, wake: int, timeout_s: float, here: asyncio.AbstractEventLoop | None) -> None:
        """Sleep until the engine wrote (then read it) or ``wake`` was written, at most ``timeout_s``."""
        with self._lock:
            pipes = [self._out, self._err, wake] if self._stderr_open else [self._out, wake]
        readable = _readable(pipes, timeout_s)
        if self._err in readable:
            self._read_stderr()
        if self._out in readable:
            problem = self._read_stdout(here)
            if problem is not None:
                self.end(problem)

    def _why(self, op: str) -> str:
        """What ended the engine, on one line whole (a summary shows the first line), then its stderr's tail.

        The first line ends with the last line the engine wrote to stderr, so a one-line summary of a
        crashed or hung engine says what the engine said last, not "its stderr ends:" and nothing after it.
        """
        tail = self.stderr_tail()
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        last = f"the last line of its stderr: {lines[-1]}" if lines else "it wrote nothing to stderr"
        ended = f"the engine process (pid {self.pid}) {self.ended} while {op} was in flight"
        return f"{ended}; {last}\nits stderr ends:\n{tail}"

    # -- the end

    def end(self, why: str) -> None:
        """Stop using this process: record why, SIGKILL it, fail every request in flight."""
        with self._lock:
            if self.ended is None:
                self.ended = why
            pending, self._pending = self._pending, {}
        self._stop_listening()
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        # The failure shows the stderr tail: read what the engine wrote before it died (its pipe closes now).
        deadline = time.monotonic() + STDERR_DRAIN_S
        while (remaining := deadline - time.monotonic()) > 0 and _readable([self._err], remaining):
            if not self._read_stderr():
                break
        failed = EngineFailed(self.ended)
        here = running_loop()
        for waiter in pending.values():
            waiter.settle(None, failed, here)

    def close(self) -> None:
        """Close stdin and let the engine exit; SIGKILL after ``EXIT_GRACE_S``."""
        with self._lock:
            if self.ended is None:
                self.ended = "was closed by the suite"
        self._stop_listening()
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        try:
            self._process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class _Hung(Exception):
    """The op's ``op_timeout_s`` passed before its reply came (set on the future by the op's timer)."""


class _ErrorReply(Exception):
    """An ``error`` reply, carried through the future and turned into the contract's class by ``request``."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.payload = error

    def error(self) -> Exception:
        return contract_error(self.payload)


def _readable(fds: list[int], timeout_s: float) -> set[int]:
    """Which of ``fds`` can be read (or are at their end) within ``timeout_s``.

    ``poll``, not ``select``: a long run starts many engine processes, and ``select`` takes no
    descriptor numbered past 1023.
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _ in poller.poll(math.ceil(timeout_s * 1000))}


def _fileno(pipe: IO[bytes] | None) -> int:
    assert pipe is not None, "Popen was given PIPE for stdin, stdout and stderr"
    return pipe.fileno()


def _record(pid: int, direction: str, message: object) -> None:
    path = os.environ.get(TRACE_ENV)
    if path:
        line = json.dumps({"pid": pid, "direction": direction, "message": message}) + "\n"
        with open(path, "a", encoding="utf-8") as trace:
            trace.write(line)


def _overlong(line: bytearray) -> str:
    return f"wrote a line on stdout longer than the protocol's {MAX_LINE_BYTES >> 20} MiB: {_cut(line)}"


def _cut(line: bytes | bytearray) -> str:
    text = line[:1000].decode(errors="replace").rstrip("\n")  # 1000 bytes hold more than 200 characters
    return repr(text if len(text) <= 200 else text[:197] + "...")
