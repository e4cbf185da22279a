"""The workers of one run: each a runner's ``worker`` in a process group of its own, and the signals sent to it.

Every fault on a worker hits its whole process tree, as a container's or a cgroup's death does: the group, and
every descendant found through /proc (RQ puts each work horse in a process group of its own, so a signal to the
worker's group alone would miss the process running the job). ``stop_all`` ends every tree — ``SIGCONT`` first
(a paused process keeps ``SIGTERM`` pending until resumed), then ``SIGTERM``, then ``SIGKILL`` after a grace
period — so nothing started here outlives the run, whatever fails.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import subprocess
import time
from pathlib import Path

from alkstore_faults.process_trees import signal_tree as _signal_tree
from alkstore_faults.process_trees import tree as _tree
from alkstore_faults.runner_program import Runner

STOP_GRACE_S = 5.0
_LIVE: set[int] = set()
"""Process-group ids of every worker still running, for the exit hook."""


class WorkerPool:
    """The workers of one run, by id; ``ledgers`` holds one JSON-lines file per worker."""

    def __init__(
        self,
        runner: Runner,
        broker: str,
        queue: str,
        ledgers: Path,
        logs: Path,
        state: Path | None = None,
        subcommand: str = "worker",
        one_scheduler: bool = False,
    ) -> None:
        self.runner = runner
        self.subcommand = subcommand
        """``worker`` (the jobs workload) or ``schedule`` (the schedule workload: a worker running the scheduler)."""
        self.one_scheduler = one_scheduler
        """The schedule workload of a library whose docs say to run one scheduler: only ``scheduler`` runs it."""
        self.scheduler: str | None = None
        """The worker that runs the one scheduler (``ALKSTORE_FAULTS_SCHEDULER=1``); the others get ``0``."""
        self.state = state
        """The run's ``ALKSTORE_FAULTS_STATE`` directory, the same for every worker (protocol 2)."""
        self.broker = broker
        self.queue = queue
        self.ledgers = ledgers
        self.logs = logs
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.deaths: dict[str, float] = {}
        """When each worker died (monotonic): killed by a fault, or found exited by ``supervise``."""
        self.restarts: list[dict[str, object]] = []
        """Each worker that exited on its own: its id, when it was found gone, its exit code, its replacement."""
        self.launched: dict[str, float] = {}
        """When each worker was started (monotonic)."""
        self._next = 1

    def start(self) -> str:
        """Start one more worker with a new id; returns the id."""
        worker = f"w{self._next}"
        self._next += 1
        ledger = self.ledgers / f"{worker}.jsonl"
        ledger.touch()
        extra = {} if self.state is None else {"ALKSTORE_FAULTS_STATE": str(self.state)}
        if self.subcommand == "schedule":
            runs_it = not self.one_scheduler or self.scheduler is None or not self.alive(self.scheduler)
            if runs_it and self.one_scheduler:
                self.scheduler = worker
            extra["ALKSTORE_FAULTS_SCHEDULER"] = "1" if runs_it else "0"
        with open(self.logs / f"{worker}.log", "ab") as log:
            process = subprocess.Popen(
                self.runner.argv(self.subcommand),
                cwd=self.runner.directory,
                env=self.runner.env(
                    self.broker, self.queue, ALKSTORE_FAULTS_WORKER=worker, ALKSTORE_FAULTS_LEDGER=str(ledger), **extra
                ),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        _LIVE.add(process.pid)
        self.launched[worker] = time.monotonic()
        self.processes[worker] = process
        return worker

    def supervise(self) -> None:
        """Restart every worker that exited on its own, as a process supervisor (systemd, Kubernetes) would.

        A worker that dies of a fault it could have survived (an unhandled rejection when its database went
        away) leaves its queue's jobs waiting, not lost: its users run it under a supervisor that starts it
        again. So the run goes on with a replacement, and the exit is reported beside the counts, never
        folded into them.
        """
        for worker, process in list(self.processes.items()):
            if worker in self.deaths or process.poll() is None:
                continue
            self.deaths[worker] = time.monotonic()
            _LIVE.discard(process.pid)
            replacement = self.start()
            self.restarts.append({"worker": worker, "returncode": process.returncode, "replacement": replacement})

    def alive(self, worker: str) -> bool:
        return worker not in self.deaths and self.processes[worker].poll() is None

    def kill9(self, worker: str) -> float:
        """``SIGKILL`` the worker's whole tree; returns when (monotonic), read before the signal reaches it."""
        process = self.processes[worker]
        members = _tree(process.pid)
        at = time.monotonic()
        _signal_tree(process.pid, signal.SIGKILL, members)
        self.deaths[worker] = at
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        _LIVE.discard(process.pid)
        return at

    def pause(self, worker: str) -> float:
        members = _tree(self.processes[worker].pid)
        at = time.monotonic()
        _signal_tree(self.processes[worker].pid, signal.SIGSTOP, members)
        return at

    def resume(self, worker: str) -> float:
        _signal_tree(self.processes[worker].pid, signal.SIGCONT)
        return time.monotonic()

    def stop_all(self) -> None:
        """End every worker: ``SIGCONT``, ``SIGTERM``, then ``SIGKILL`` of the group after the grace period."""
        trees = {process.pid: _tree(process.pid) for process in self.processes.values()}
        for process in self.processes.values():
            _signal_tree(process.pid, signal.SIGCONT, trees[process.pid])
            _signal_tree(process.pid, signal.SIGTERM, trees[process.pid])
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        for process in self.processes.values():
            _signal_tree(process.pid, signal.SIGKILL, trees[process.pid] | _tree(process.pid))
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
            _LIVE.discard(process.pid)


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_LIVE):
        _signal_tree(pgid, signal.SIGCONT)
        _signal_tree(pgid, signal.SIGKILL)
