"""The soak benchmark's ``--quick`` mode on SQLite, so every CI run exercises it (~15 s).

``benchmarks/soak.py --quick`` runs three worker processes for ten seconds with
retries, fails, heartbeats, lapsed leases and SIGKILLed workers, drains the
queue and checks the whole history; it exits non-zero when a job was lost,
handed out twice, unexpected or stranded. This test runs it as a user would
and also reads its summary, so a soak that silently injected no fault fails.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parent.parent / "benchmarks" / "soak.py"
TIMEOUT_S = 180


def test_quick_soak_on_sqlite_loses_and_duplicates_nothing() -> None:
    done = subprocess.run(
        [sys.executable, str(SOAK), "--engine", "sqlite", "--quick"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"the soak failed ({done.returncode}):\n{output[-6000:]}"
    assert "lost 0, duplicated 0, unexpected 0, stranded 0" in done.stdout, output
    assert "verdict: OK" in done.stdout, output
    figures = {
        name: int(count) for name, count in re.findall(r"\b(kills|lapses|retries|fails|heartbeats) (\d+)", output)
    }
    for fault in ("kills", "lapses", "retries", "fails", "heartbeats"):
        assert figures.get(fault, 0) > 0, f"the soak injected no {fault}:\n{output}"
