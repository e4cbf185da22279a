"""An engine declaring a coarser time resolution, and keeping it, is certified, with the resolution named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from alkstore_contract.adapter import time_resolution_us

REPO = Path(__file__).resolve().parents[1]


def test_a_millisecond_engine_that_declares_it_is_certified(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("ALKSTORE_REQUIRE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--alkstore-engine=tests.engines.sqlite_milliseconds:adapter",
            f"--alkstore-report={report}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    engine = json.loads(report.read_text(encoding="utf-8"))["engines"][0]
    assert engine["certified"], done.stdout[-4000:]
    assert engine["time_resolution_us"] == 1000
    assert ", time resolution 1 ms" in engine["certificate"]


def test_a_resolution_other_than_us_ms_or_s_is_refused() -> None:
    class Odd:
        time_resolution_us = 10

    with pytest.raises(ValueError, match=r"time_resolution_us=10: an adapter declares 1 \(µs\), 1000 \(ms\)"):
        time_resolution_us(Odd())
