"""The many-workers benchmark's ``--quick`` mode on SQLite and mem: it runs end to end, with no lock errors.

``benchmarks/many_workers.py --quick`` consumes tiny backlogs with 16 worker
tasks in one process (every engine asked for) and with 4 processes × 4 workers
on one SQLite file, beside the bare aiosqlite driver doing the same. This test
runs it as a user would, so a change that breaks the benchmark fails CI. It
asserts nothing about speed; it does assert what issue 16 requires of SQLite
under many workers and processes: no worker ever meets an error (the busy
timeout makes a contended writer wait), and every job goes through.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MANY_WORKERS = Path(__file__).resolve().parent.parent / "benchmarks" / "many_workers.py"
TIMEOUT_S = 240


def test_quick_many_workers_run_meets_no_lock_errors(tmp_path: Path) -> None:
    out_json = tmp_path / "many.json"
    done = subprocess.run(
        [sys.executable, str(MANY_WORKERS), "--quick", "--engines", "sqlite,mem", "--json", str(out_json)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"many_workers.py --quick failed ({done.returncode}):\n{(done.stdout + done.stderr)[-6000:]}"
    )
    assert "| sqlite | claim_one+ack | 4 processes × 4 |" in done.stdout, done.stdout
    rows = json.loads(out_json.read_text())["rows"]
    shapes = {(row["engine"], row["impl"], row["path"], row["processes"], row["workers"]) for row in rows}
    for path in ("claim_one+ack", "claim_batch+ack_batch"):
        for impl in ("alkstore", "aiosqlite"):
            assert ("sqlite", impl, path, 1, 16) in shapes
            assert ("sqlite", impl, path, 4, 4) in shapes
        assert ("mem", "alkstore", path, 1, 16) in shapes
    for row in rows:
        assert row["errors"] == {}, row
        assert row["jobs_not_through"] == 0, row
        assert row["median"] > 0, row
