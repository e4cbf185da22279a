"""A runtime that never runs a job and will not stop: its worker ignores SIGTERM and forks a child that does too,
in a process group of its own (as RQ's work horse is). The harness must still leave nothing running: the test
reads the pids it wrote to ``$STUBBORN_PIDS`` and checks that each is gone after the run.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> int:
    command = sys.argv[1]
    if command == "describe":
        description = {
            "library": "stubborn",
            "version": "1",
            "settings": [],
            "lease_s": 1,
            "recovery_window_s": 1,
            "faults": ["kill9"],
            "promises": [],
            "caveats": [],
        }
        sys.stdout.write(json.dumps(description) + "\n")
    elif command == "worker":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = os.fork()
        if child == 0:
            os.setpgrp()
            while True:
                time.sleep(1)
        with open(os.environ["STUBBORN_PIDS"], "a", encoding="utf-8") as pids:
            pids.write(f"{os.getpid()}\n{child}\n")
        while True:
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
