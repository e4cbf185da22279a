"""An engine declaring a coarser time resolution, and keeping it, is certified, with the resolution named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.adapter import time_resolution_us

REPO = Path(__file__).resolve().parents[1]


MS_ENGINE = "tests.engines.sqlite_milliseconds:adapter"
SUITE_REPORT = "ALKSTORE_SUITE_MANUAL_REPORT"
"""The report of ci/test.sh's manual-clock run of the suite, which certifies ``MS_ENGINE`` beside the engines."""


def _ms_engine_report(tmp_path: Path) -> tuple[dict[str, Any], str]:
    """The millisecond engine's entry of a suite report, and the run's output to show when it is not certified.

    ``ci/test.sh`` runs the engine in its manual-clock run of the suite and names
    that report in ``$ALKSTORE_SUITE_MANUAL_REPORT``: then the entry is read from
    it, and a report without the engine fails the test. Otherwise the suite runs
    here, in a pytest process of its own.
    """
    recorded = os.environ.get(SUITE_REPORT)
    if recorded:
        engines = json.loads(Path(recorded).read_text(encoding="utf-8"))["engines"]
        found = [engine for engine in engines if engine["name"] == "sqlite-ms"]
        assert found, f"${SUITE_REPORT} names {recorded}, whose run did not include {MS_ENGINE}"
        return found[0], f"see the suite's output for sqlite-ms in {recorded}"
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
            f"--alkstore-engine={MS_ENGINE}",
            f"--alkstore-report={report}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(report.read_text(encoding="utf-8"))["engines"][0], done.stdout[-4000:]


def test_a_millisecond_engine_that_declares_it_is_certified(tmp_path: Path) -> None:
    engine, output = _ms_engine_report(tmp_path)
    assert engine["certified"], output
    assert engine["time_resolution_us"] == 1000
    assert ", time resolution 1 ms" in engine["certificate"]


def test_a_resolution_other_than_us_ms_or_s_is_refused() -> None:
    class Odd:
        time_resolution_us = 10

    with pytest.raises(ValueError, match=r"time_resolution_us=10: an adapter declares 1 \(µs\), 1000 \(ms\)"):
        time_resolution_us(Odd())
