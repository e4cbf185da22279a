"""Starting and stopping real ``alkstore worker`` processes for the worker tests, never leaving one behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.worker_app import LEASE_ENV, LOG_ENV, STORE_ENV

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 60.0
"""How long a wait for a worker's next step may take before the test fails: generous, because on a loaded
two-core machine a Python process's start and imports alone have taken seconds (a wait that passes costs nothing)."""


class WorkerProcess:
    """One ``python -m alkstore_worker worker APP`` process (``tests.worker_app:app`` unless told), in its own
    process group."""

    def __init__(
        self, store: str, log: Path, *args: str, lease_s: float = 2.0, app: str = "tests.worker_app:app"
    ) -> None:
        env = {**os.environ, STORE_ENV: store, LOG_ENV: str(log), LEASE_ENV: str(lease_s)}
        self.stderr_path = log.with_name(f"{log.stem}-worker-{time.monotonic_ns()}.stderr")
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "alkstore_worker", "worker", app, "--poll-max", "0.1", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def events(self) -> list[dict[str, object]]:
        """The worker's structured log lines so far."""
        lines = self.stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def until(self, condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
        """``wait_until`` that fails at once if this worker exited, and shows its stderr when it fails."""

        def alive_and(condition: Callable[[], bool] = condition) -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"worker {self.pid} exited {self.process.returncode}:\n{self.stderr()}")
            return condition()

        try:
            wait_until(alive_and, what, timeout_s)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nworker {self.pid}'s stderr so far:\n{self.stderr()}") from None

    def wait_started(self) -> None:
        self.until(lambda: any(e["event"] == "worker_started" for e in self.events()), f"worker {self.pid} started")

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def wait(self, timeout_s: float = WAIT_S) -> int:
        return self.process.wait(timeout=timeout_s)

    def kill(self) -> None:
        """SIGKILL the whole process group (whatever state it is in) and reap it."""
        if self.process.poll() is None:
            os.killpg(self.pid, signal.SIGKILL)
            self.process.wait()
        self._stderr.close()


@contextmanager
def workers(
    store: str, log: Path, *args: str, count: int = 1, lease_s: float = 2.0, app: str = "tests.worker_app:app"
) -> Iterator[list[WorkerProcess]]:
    """``count`` worker processes of ``app``, all SIGKILLed on the way out, whatever the test did."""
    started: list[WorkerProcess] = []
    try:
        for _ in range(count):
            started.append(WorkerProcess(store, log, *args, lease_s=lease_s, app=app))
        for worker in started:
            worker.wait_started()
        yield started
    finally:
        for worker in started:
            worker.kill()


def handler_log(log: Path) -> list[dict[str, object]]:
    """The handlers' own lines (tests.worker_app.record)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Poll ``condition`` until true; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for: {what}")
        time.sleep(0.05)
