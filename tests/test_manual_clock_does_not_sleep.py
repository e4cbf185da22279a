"""Under ``--alkstore-clock manual`` no row waits for time to pass: it moves the clock instead.

The suite runs in this process with ``asyncio.sleep`` and ``time.sleep``
wrapped; the longest sleep any row (or the engine under it) asked for must
stay below a few milliseconds. Worker processes are not watched: they never
move time, they only work while the row reads their reports.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

import pytest

LONGEST_ALLOWED_S = 0.005


def test_the_sqlite_suite_on_the_manual_clock_never_sleeps(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    result.assert_outcomes(passed=14, skipped=2)  # network_faults and network_history: sqlite is not networked
    assert asked, "the wrapper saw no sleep at all; it is not wired in"
    longest = max(asked)
    assert longest <= LONGEST_ALLOWED_S, f"a row slept {longest} s under the manual clock (of {len(asked)} sleeps)"
