"""Under ``--alkstore-clock manual`` no row waits for time to pass: it moves the clock instead.

The sqlite suite runs with ``asyncio.sleep`` and ``time.sleep`` wrapped; the
longest sleep any row (or the engine under it) asked for must stay below a few
milliseconds. Worker processes are not watched: they never move time, they
only work while the row reads their reports.

``ci/test.sh`` already runs the whole suite on the manual clock, so it records
the sleeps there (``tests/manual_clock_sleeps.py``) and names the record in
``$ALKSTORE_MANUAL_CLOCK_SLEEPS``; this test then reads that record instead of
running the suite again, and fails when the record is missing. Without the
variable it runs the sqlite suite itself, in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

LONGEST_ALLOWED_S = 0.005
RECORD = "ALKSTORE_MANUAL_CLOCK_SLEEPS"
"""The path of the record ci/test.sh's manual-clock run of the suite wrote."""
OUTCOMES = {"passed": 14, "skipped": 2}
"""The sqlite rows on the manual clock: network_faults and network_history skip, sqlite is not networked."""


def _check(outcomes: dict[str, int], asked: list[float], sleeps: int) -> None:
    assert outcomes == OUTCOMES
    assert sleeps, "the wrapper saw no sleep at all; it is not wired in"
    longest = max(asked)
    assert longest <= LONGEST_ALLOWED_S, f"a row slept {longest} s under the manual clock (of {sleeps} sleeps)"


def _recorded(path: Path) -> None:
    """Check the record of ci/test.sh's run: its sqlite rows, with the sleeps each asked for."""
    assert path.is_file(), f"${RECORD} names {path}, which the manual-clock run of the suite did not write"
    record: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    sqlite = {node: entry for node, entry in record.items() if node.endswith("[sqlite]")}
    outcomes = dict(Counter(entry["outcome"] for entry in sqlite.values()))
    longest = [float(entry["longest_s"]) for entry in sqlite.values()]
    _check(outcomes, longest, sum(int(entry["sleeps"]) for entry in sqlite.values()))


def test_the_sqlite_suite_on_the_manual_clock_never_sleeps(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = os.environ.get(RECORD)
    if recorded:
        _recorded(Path(recorded))
        return
    asked: list[float] = []
    real_async_sleep = asyncio.sleep
    real_sleep = time.sleep

    def async_sleep(delay: float, result: Any = None) -> Awaitable[Any]:
        asked.append(delay)
        return real_async_sleep(delay, result)

    def sleep(delay: float) -> None:
        asked.append(delay)
        real_sleep(delay)

    monkeypatch.setattr(asyncio, "sleep", async_sleep)
    monkeypatch.setattr(time, "sleep", sleep)
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",  # rows need no pytest-asyncio; left on, it warns about its unset loop scope
        "--alkstore-engine=sqlite",
        "--alkstore-clock=manual",
        "--alkstore-examples=10",
    )
    _check(result.parseoutcomes(), asked or [0.0], len(asked))
