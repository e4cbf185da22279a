"""Under ``--alkstore-clock manual`` no row waits for time to pass: it moves the clock instead.

The sqlite suite runs with ``asyncio.sleep`` and ``time.sleep`` wrapped
(``tests/manual_clock_sleeps.py``); the longest sleep any row (or the engine
under it) asked for must stay below a few milliseconds. Worker processes are
not watched: they never move time, they only work while the row reads their
reports.

``ci/test.sh`` already runs the whole suite on the manual clock, so it records
the sleeps there and names the record in ``$ALKSTORE_MANUAL_CLOCK_SLEEPS``;
this test then reads that record instead of running the suite again, and fails
when the record is missing. Without the variable it runs the sqlite suite
itself, in a pytest process of its own, with the same recorder.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

LONGEST_ALLOWED_S = 0.005
RECORD = "ALKSTORE_MANUAL_CLOCK_SLEEPS"
"""The path of the record ci/test.sh's manual-clock run of the suite wrote."""
OUTCOMES = {"passed": 18, "skipped": 4}
"""The sqlite rows on the manual clock: network_faults, network_history and server_clock skip (sqlite is not
networked), and transactional_enqueue (it does not declare it); release, unique_keys and progress run (2.1)."""
REPO = Path(__file__).resolve().parents[1]


def _check_record(path: Path) -> None:
    """The record's sqlite rows: all run as expected, some sleep seen (the recorder is wired in), none long."""
    assert path.is_file(), f"{path} was not written by the manual-clock run of the suite"
    record: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    sqlite = [entry for node, entry in record.items() if node.endswith("[sqlite]")]
    assert dict(Counter(entry["outcome"] for entry in sqlite)) == OUTCOMES
    sleeps = sum(int(entry["sleeps"]) for entry in sqlite)
    assert sleeps, "the recorder saw no sleep at all; it is not wired in"
    longest = max(float(entry["longest_s"]) for entry in sqlite)
    assert longest <= LONGEST_ALLOWED_S, f"a row slept {longest} s under the manual clock (of {sleeps} sleeps)"


def test_the_sqlite_suite_on_the_manual_clock_never_sleeps(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = os.environ.get(RECORD)
    if recorded:
        _check_record(Path(recorded))
        return
    record = pytester.path / "sleeps.json"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",  # rows need no pytest-asyncio; left on, it warns about its unset loop scope
        "-p",
        "tests.manual_clock_sleeps",
        f"--alkstore-sleep-record={record}",
        "--alkstore-engine=sqlite",
        "--alkstore-clock=manual",
        "--alkstore-examples=10",
    )
    _check_record(record)
