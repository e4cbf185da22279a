"""``--processes N``: N worker processes under one parent that forwards signals and restarts the ones that die.

Each child is ``python -m alkstore_worker worker ... --processes 1`` in its
own session, so a terminal's Ctrl-C reaches only the parent, which forwards
one SIGTERM to each child (each then stops gracefully); a second signal to the
parent SIGKILLs them all and exits 1 at once. A child whose parent dies (a
``kill -9`` of the parent) notices within a second (its parent pid changes)
and stops gracefully, so nothing is left running.

A child that dies while no stop was asked for — killed by a signal (the OOM
killer's SIGKILL), or exiting non-zero (its store unreachable at start) — is
logged (``child_died``: its exit code or signal name) and started again after
a backoff that doubles with each restart in the last ``window_s``. More than
``max_restarts`` deaths in that window spend the budget: the parent logs
``restart_budget_spent``, stops the other children gracefully, and exits with
the death's status (a signal's as a shell shows it, 128 + its number), so a
service manager above restarts or alerts; never 0. A child that exits 0
stopped on purpose (``--drain`` done, or a SIGTERM sent to it alone) and is not
restarted.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from types import FrameType

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.validation import describe_value
from alkstore_worker.events import emit

PARENT_ENV = "ALKSTORE_WORKER_PARENT"
SLOT_ENV = "ALKSTORE_WORKER_SLOT"
"""Which of the N places a child runs in (0 to N-1, the same across its restarts): ``--metrics-port`` + it."""
POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How the parent restarts children that died (``--max-restarts``, ``--restart-window``, ``--restart-backoff``).

    The defaults let a worker ride out a few crashes (an OOM kill, a store
    that refused connections for a minute) without restarting in a tight loop
    forever when it cannot start at all: 5 restarts within 60 s, the first
    after 1 s, each next one twice as late, at most 30 s.
    """

    max_restarts: int = 5
    window_s: float = 60.0
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, int) or self.max_restarts < 0:
            raise InvalidArgument(f"--max-restarts={describe_value(self.max_restarts)}: must be an int >= 0")
        for flag, value, zero_allowed in (
            ("--restart-window", self.window_s, False),
            ("--restart-backoff", self.backoff_s, True),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (value >= 0 if zero_allowed else value > 0)
                or not value < math.inf
            ):
                rule = ">= 0" if zero_allowed else "> 0"
                raise InvalidArgument(f"{flag}={describe_value(value)}: must be a finite number of seconds {rule}")

    def delay_s(self, recent: int) -> float:
        """The wait before a restart when ``recent`` restarts happened within the window already."""
        return float(min(self.backoff_max_s, self.backoff_s * 2**recent))


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: its exit code, or 128 + the signal that killed it."""
    return 128 - returncode if returncode < 0 else returncode


def describe_exit(returncode: int) -> dict[str, object]:
    """The log fields of a child's end: ``exit_code``, or ``signal`` by name."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return {"signal": name}
    return {"exit_code": returncode}


class _Slot:
    """One of the N places a child runs in: its current process, and when a dead one is due to start again."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process: subprocess.Popen[bytes] | None = None
        self.restart_at: float | None = None
        self.status = 0
        """The status this slot ends the run with: 0, or the last death it was not restarted from."""


def supervise(child_args: list[str], processes: int, policy: RestartPolicy | None = None) -> int:
    """Run ``processes`` children with ``child_args`` until each stopped for good; the status the parent exits with.

    0 when every child ended with 0; otherwise the worst status of a child whose end was not followed by a
    restart (a death that spent the budget, or a child killed during the stop).
    """
    policy = policy or RestartPolicy()
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    command = [sys.executable, "-m", "alkstore_worker", "worker", *child_args, "--processes", "1"]
    slots = [_Slot(index) for index in range(processes)]
    restarts: deque[float] = deque()
    signals = 0
    budget_spent = False

    def running() -> list[subprocess.Popen[bytes]]:
        return [slot.process for slot in slots if slot.process is not None and slot.process.poll() is None]

    def stop_all(signum: int) -> None:
        for slot in slots:
            slot.restart_at = None
        for child in running():
            child.send_signal(signum)

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal signals
        signals += 1
        stop_all(signal.SIGTERM if signals == 1 else signal.SIGKILL)
        if signals > 1:
            os._exit(1)

    def start(slot: _Slot) -> None:
        slot.restart_at = None
        slot.status = 0
        slot.process = subprocess.Popen(command, env={**env, SLOT_ENV: str(slot.index)}, start_new_session=True)
        emit("child_started", slot=slot.index, pid=slot.process.pid)

    def ended(slot: _Slot, process: subprocess.Popen[bytes]) -> None:
        returncode = process.returncode
        slot.process = None
        if returncode == 0:
            return
        stopping = signals > 0 or budget_spent
        fields = {"slot": slot.index, "pid": process.pid, **describe_exit(returncode)}
        emit("child_died", logging.WARNING if stopping else logging.ERROR, **fields)
        slot.status = exit_status(returncode)
        if stopping:
            return
        now = time.monotonic()
        while restarts and restarts[0] <= now - policy.window_s:
            restarts.popleft()
        if len(restarts) >= policy.max_restarts:
            emit("restart_budget_spent", logging.CRITICAL, **fields, restarts=len(restarts), window_s=policy.window_s)
            spend_budget()
            return
        delay = policy.delay_s(len(restarts))
        restarts.append(now)
        slot.restart_at = now + delay
        emit("child_restarting", logging.WARNING, slot=slot.index, delay_s=delay)

    def spend_budget() -> None:
        nonlocal budget_spent
        budget_spent = True
        stop_all(signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for slot in slots:
            start(slot)
        while True:
            for slot in slots:
                if slot.process is not None and slot.process.poll() is not None:
                    ended(slot, slot.process)
                if slot.restart_at is not None and time.monotonic() >= slot.restart_at:
                    start(slot)
            if not running() and all(slot.restart_at is None for slot in slots):
                return max(slot.status for slot in slots)
            time.sleep(POLL_S)
    finally:
        for child in running():
            child.kill()
            child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
