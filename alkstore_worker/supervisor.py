"""``--processes N``: N worker processes, one signal-forwarding parent.

Each child is ``python -m alkstore_worker worker ... --processes 1`` in its
own session, so a terminal's Ctrl-C reaches only the parent, which forwards
one SIGTERM to each child (each then stops gracefully); a second signal to the
parent SIGKILLs them all and exits 1 at once. A child whose parent dies (a
``kill -9`` of the parent) notices within a second (its parent pid changes)
and stops gracefully, so nothing is left running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import FrameType

PARENT_ENV = "ALKSTORE_WORKER_PARENT"


def supervise(child_args: list[str], processes: int) -> int:
    """Run ``processes`` children with ``child_args`` until they exit; their worst exit code (0 when all stopped)."""
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    children: list[subprocess.Popen[bytes]] = []
    signals = 0

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal signals
        signals += 1
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM if signals == 1 else signal.SIGKILL)
        if signals > 1:
            os._exit(1)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for _ in range(processes):
            children.append(
                subprocess.Popen(
                    [sys.executable, "-m", "alkstore_worker", "worker", *child_args, "--processes", "1"],
                    env=env,
                    start_new_session=True,
                )
            )
        while any(child.poll() is None for child in children):
            time.sleep(0.1)
        return max((child.returncode for child in children), default=0)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
