"""Runs a deliberately broken runtime under kill9, as a user runs ``alkstore faults``, and reads back its report.

A broken runtime's test (the Python, Java and Ruby runners' own) asks the same thing: does the command, run on a
runtime that loses the killed worker's job, exit 1 naming the broken ``lost`` promise? This runs it once, the
same way for each, and leaves to the test what it checks of that one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def lost_under_kill9(runtime: Path, report: Path, timeout: float) -> tuple[dict[str, Any], str]:
    """The one run of ``alkstore faults RUNTIME --short --fault kill9 --seed 7`` read from its ``report``, and the
    command's output, once the command has exited 1 saying the ``lost`` promise broke."""
    command = [sys.executable, "-m", "alkstore_cli", "faults", str(runtime), "--short", "--fault", "kill9"]
    done = subprocess.run(
        [*command, "--seed", "7", "--report", str(report)], capture_output=True, text=True, timeout=timeout, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "BROKEN PROMISE under kill9 (round 0): lost" in output, output
    [run] = json.loads(report.read_text(encoding="utf-8"))["runs"]
    return run, output
