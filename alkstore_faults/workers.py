"""The workers of one run: each a runner's ``worker`` in a process group of its own, and the signals sent to it.

Every fault on a worker hits its whole group (a library that forks a work horse per job keeps it there), and
``stop_all`` ends every group — ``SIGCONT`` first (a paused group ignores ``SIGTERM`` until resumed), then
``SIGTERM``, then ``SIGKILL`` after a grace period — so nothing started here outlives the run, whatever fails.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from alkstore_faults.runner import Runner

STOP_GRACE_S = 5.0
_LIVE: set[int] = set()
"""Process-group ids of every worker still running, for the exit hook."""


class WorkerPool:
    """The workers of one run, by id; ``ledgers`` holds one JSON-lines file per worker."""

    def __init__(self, runner: Runner, broker: str, queue: str, ledgers: Path, logs: Path) -> None:
        self.runner = runner
        self.broker = broker
        self.queue = queue
        self.ledgers = ledgers
        self.logs = logs
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.deaths: dict[str, float] = {}
        """When each killed worker was killed (monotonic)."""
        self._next = 1

    def start(self) -> str:
        """Start one more worker with a new id; returns the id."""
        worker = f"w{self._next}"
        self._next += 1
        ledger = self.ledgers / f"{worker}.jsonl"
        ledger.touch()
        with open(self.logs / f"{worker}.log", "ab") as log:
            process = subprocess.Popen(
                self.runner.argv("worker"),
                cwd=self.runner.directory,
                env=self.runner.env(
                    self.broker, self.queue, ALKSTORE_FAULTS_WORKER=worker, ALKSTORE_FAULTS_LEDGER=str(ledger)
                ),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        _LIVE.add(process.pid)
        self.processes[worker] = process
        return worker

    def alive(self, worker: str) -> bool:
        return worker not in self.deaths and self.processes[worker].poll() is None

    def kill9(self, worker: str) -> float:
        """``SIGKILL`` the worker's whole group; returns when (monotonic)."""
        process = self.processes[worker]
        _signal_group(process.pid, signal.SIGKILL)
        at = time.monotonic()
        self.deaths[worker] = at
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        _LIVE.discard(process.pid)
        return at

    def pause(self, worker: str) -> float:
        _signal_group(self.processes[worker].pid, signal.SIGSTOP)
        return time.monotonic()

    def resume(self, worker: str) -> float:
        _signal_group(self.processes[worker].pid, signal.SIGCONT)
        return time.monotonic()

    def stop_all(self) -> None:
        """End every worker: ``SIGCONT``, ``SIGTERM``, then ``SIGKILL`` of the group after the grace period."""
        for process in self.processes.values():
            _signal_group(process.pid, signal.SIGCONT)
            _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        for process in self.processes.values():
            _signal_group(process.pid, signal.SIGKILL)  # the group may outlive its leader (a work horse)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
            _LIVE.discard(process.pid)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_LIVE):
        _signal_group(pgid, signal.SIGCONT)
        _signal_group(pgid, signal.SIGKILL)
