"""One engine process: its pipes, the requests in flight, and what ends it.

Part of the wire.

Two threads read the process's stdout and stderr, so a request can be
awaited from any event loop (each row runs in a loop of its own) and the one
synchronous op of the surface, ``store.queue``, can wait for its answer
without a loop at all. Every line on stdout is checked — JSON, a reply to a
request in flight, accepted by the schema — and anything else ends the
process: what it did is the error of every op in flight, with the tail of
its stderr, and a process that never answers is ended after the manifest's
``op_timeout_s``. So an engine that misbehaves costs one op a verdict, never
the run a hang.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from alkstore_contract.wire.errors import contract_error
from alkstore_contract.wire.manifest import Manifest
from alkstore_contract.wire.schema import reply_fault

STDERR_TAIL_CHARS = 4000
"""How much of an engine's log a failure shows."""
EXIT_GRACE_S = 5.0
"""How long an engine may take to exit once its stdin is closed, before SIGKILL."""
STDERR_DRAIN_S = 2.0
"""How long an ended engine's last stderr may take to arrive, so a failure shows what the engine logged."""
_PR_SET_PDEATHSIG = 1
TRACE_ENV = "ALKSTORE_WIRE_TRACE"
"""When set, every message of every engine process is appended to the file it names, one JSON line each:
``{"pid": …, "direction": "sent" | "received", "message": …}`` (a recorded session; worker processes too)."""


class EngineFailed(Exception):
    """The engine process crashed, hung, broke the protocol or cannot start: the op in flight fails with this."""


def _pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the engine gets SIGKILL when the thread that started it dies (a worker killed with kill -9).

    It only calls ``prctl``, which takes no lock, so it is safe between fork and exec
    even though the suite's reader threads run.
    """
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform.startswith("linux") else None


class EngineProcess:
    """A running engine: send requests, await or wait for replies, end it."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._ids = itertools.count()
        self._pending: dict[int, tuple[str, concurrent.futures.Future[Any]]] = {}
        self._lock = threading.Lock()
        self._stderr = bytearray()
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
        threading.Thread(target=self._read_stdout, name=f"alkstore-wire-{self.pid}", daemon=True).start()
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, name=f"alkstore-wire-err-{self.pid}", daemon=True
        )
        self._stderr_reader.start()

    # -- what the engine wrote

    def stderr_tail(self) -> str:
        with self._lock:
            text = bytes(self._stderr).decode(errors="replace")
        return text or "(nothing)"

    def _read_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            with self._lock:
                self._stderr += chunk
                del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL_CHARS)]

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            problem = self._take(line)
            if problem is not None:
                self.end(problem)
                return
        code = self._process.wait()
        self.end(f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}")

    def _take(self, line: bytes) -> str | None:
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
            entry = self._pending.get(reply_to)
        if entry is None:
            return f"sent a message that answers no request in flight: {_cut(line)}"
        op, future = entry
        problem = reply_fault(message, op)
        if problem is not None:
            return f"sent a reply to {op} the protocol's schema rejects: {problem}: {_cut(line)}"
        with self._lock:
            del self._pending[reply_to]
        if message["type"] == "ok":
            future.set_result(message["result"])
        else:
            future.set_exception(_ErrorReply(message["error"]))
        return None

    # -- requests

    def send(self, op: str, fields: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Write one request; the future resolves with its result, or raises its error."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self.ended is not None:
                future.set_exception(EngineFailed(self.ended))
                return future
            request_id = next(self._ids)
            self._pending[request_id] = (op, future)
        message = {"id": request_id, "type": op, **fields}
        _record(self.pid, "sent", message)
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            with self._lock:
                assert self._process.stdin is not None
                self._process.stdin.write(data)
                self._process.stdin.flush()
        except (OSError, ValueError):
            self.end("closed its stdin (it stopped reading requests)")
        return future

    async def request(self, op: str, fields: dict[str, Any]) -> Any:
        """Send ``op`` and await its result; a hang ends the process after the manifest's ``op_timeout_s``."""
        future = self.send(op, fields)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.manifest.op_timeout_s)
        except TimeoutError:
            self.end(f"did not answer {op} within {self.manifest.op_timeout_s} s (op_timeout_s)")
            raise EngineFailed(self._why(op)) from None
        except _ErrorReply as reply:
            raise reply.error() from None
        except EngineFailed:
            raise EngineFailed(self._why(op)) from None

    def request_sync(self, op: str, fields: dict[str, Any], timeout_s: float | None = None) -> Any:
        """``request`` without an event loop (the handshake, ``store.queue``)."""
        future = self.send(op, fields)
        limit = self.manifest.op_timeout_s if timeout_s is None else timeout_s
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            self.end(f"did not answer {op} within {limit} s")
            raise EngineFailed(self._why(op)) from None
        except _ErrorReply as reply:
            raise reply.error() from None
        except EngineFailed:
            raise EngineFailed(self._why(op)) from None

    def _why(self, op: str) -> str:
        return (
            f"the engine process (pid {self.pid}) {self.ended} while {op} was in flight; "
            f"its stderr ends:\n{self.stderr_tail()}"
        )

    # -- the end

    def end(self, why: str) -> None:
        """Stop using this process: record why, SIGKILL it, fail every request in flight."""
        with self._lock:
            if self.ended is None:
                self.ended = why
            pending, self._pending = self._pending, {}
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        # The failure shows the stderr tail: read what the engine wrote before it died (its pipe closes now).
        self._stderr_reader.join(STDERR_DRAIN_S)
        for _, future in pending.values():
            if not future.done():
                future.set_exception(EngineFailed(self.ended))

    def close(self) -> None:
        """Close stdin and let the engine exit; SIGKILL after ``EXIT_GRACE_S``."""
        with self._lock:
            if self.ended is None:
                self.ended = "was closed by the suite"
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        try:
            self._process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class _ErrorReply(Exception):
    """An ``error`` reply, carried through the future and turned into the contract's class by ``request``."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.payload = error

    def error(self) -> Exception:
        return contract_error(self.payload)


def _record(pid: int, direction: str, message: object) -> None:
    path = os.environ.get(TRACE_ENV)
    if path:
        line = json.dumps({"pid": pid, "direction": direction, "message": message}) + "\n"
        with open(path, "a", encoding="utf-8") as trace:
            trace.write(line)


def _cut(line: bytes) -> str:
    text = line.decode(errors="replace").rstrip("\n")
    return repr(text if len(text) <= 200 else text[:197] + "...")
