"""A pytest plugin (``-p tests.manual_clock_sleeps``) that records every real sleep each test asked for.

``--alkstore-sleep-record=PATH`` wraps ``asyncio.sleep`` and ``time.sleep`` in
the process that runs the tests (each xdist worker) and writes, from the
controller, one entry per test: its outcome, how many sleeps it asked for and
the longest. ``ci/test.sh`` loads it in the manual-clock run of the suite, and
``tests/test_manual_clock_does_not_sleep.py`` reads that record instead of
running the suite a second time. Child processes a row starts are not watched:
they never move time, they only work while the row reads their reports.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Generator
from pathlib import Path
from typing import Any

import pytest

OPTION = "--alkstore-sleep-record"
KEY = "slept"
"""The ``user_properties`` key: ``[count, longest]`` of the sleeps asked for in setup, call and teardown."""

_asked: list[float] = []
_results: dict[str, dict[str, Any]] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, default=None, help="write each test's real sleeps to this JSON file")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(OPTION) is None:
        return
    real_async_sleep = asyncio.sleep
    real_sleep = time.sleep

    def async_sleep(delay: float, result: Any = None) -> Awaitable[Any]:
        _asked.append(delay)
        return real_async_sleep(delay, result)

    def sleep(delay: float) -> None:
        _asked.append(delay)
        real_sleep(delay)

    asyncio.sleep = async_sleep  # type: ignore[assignment]
    time.sleep = sleep  # type: ignore[assignment]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    _asked.clear()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield
    if item.config.getoption(OPTION) is not None:
        item.user_properties.append((KEY, [len(_asked), max(_asked, default=0.0)]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _results.setdefault(report.nodeid, {"outcome": "passed", "sleeps": 0, "longest_s": 0.0})
    if report.outcome != "passed":
        entry["outcome"] = report.outcome
    for key, value in report.user_properties:
        if key == KEY and isinstance(value, list):
            entry["sleeps"], entry["longest_s"] = value


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption(OPTION)
    if path is None or hasattr(session.config, "workerinput"):
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(_results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
