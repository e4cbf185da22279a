"""An engine declaring a coarser time resolution, and keeping it, is certified, with the resolution named."""

from __future__ import annotations

from pathlib import Path

import pytest

from alkstore_contract.adapter import time_resolution_us
from tests.suite_subprocess import recorded_or_run

MS_ENGINE = "tests.engines.sqlite_milliseconds:adapter"


def test_a_millisecond_engine_that_declares_it_is_certified(tmp_path: Path) -> None:
    engine, output = recorded_or_run(tmp_path, MS_ENGINE, "sqlite-ms")
    assert engine["certified"], output
    assert engine["time_resolution_us"] == 1000
    assert ", time resolution 1 ms" in engine["certificate"]


def test_a_resolution_other_than_us_ms_or_s_is_refused() -> None:
    class Odd:
        time_resolution_us = 10

    with pytest.raises(ValueError, match=r"time_resolution_us=10: an adapter declares 1 \(µs\), 1000 \(ms\)"):
        time_resolution_us(Odd())
