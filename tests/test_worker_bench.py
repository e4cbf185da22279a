"""``benchmarks/worker.py`` reports what happened, never a figure for a pass that failed (issue 47).

The harness's own accounting, on marks and passes written here, in milliseconds:
a job whose handler ran twice is counted, a pass that stalled is ``FAILED``
with the jobs it lost and gets no rate, and a peer's ratio pairs each of its
passes with alkstore's pass of the same round. Nothing is run or timed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "worker.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("worker_bench_under_test", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


bench: Any = _load()


def test_a_job_run_twice_is_counted_and_counts_once_as_done(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.write_text("d 1 10.0 10.1\nd 2 10.0 10.2\nd 1 11.0 11.1\nl 0 0.002 10.3\n", encoding="ascii")
    drained = bench.Marks.read(marks, "d")
    assert sorted(drained.runs) == ["1", "2"]
    assert drained.ran_twice == 1
    assert bench.Marks.read(marks, "l").ran_twice == 0


def test_a_pass_whose_jobs_do_not_all_run_fails_with_the_jobs_it_lost(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.write_text("d 1 10.0 10.1\nd 1 10.2 10.3\n", encoding="ascii")
    with pytest.raises(bench.Failed, match=r"stalled: 1 of 3 jobs ran, .* lost 2"):
        asyncio.run(bench._until(marks, "d", 3, [], 0.01))


def _pass(system: str, index: int, rate: float | None, failed: str = "") -> Any:
    config = bench.Config("drain", system, "equal", 4, "noop")
    return bench.Pass(config, index, "2026-12-06T00:00:00+00:00", (1.0, 1.0, 1.0), jobs_per_s=rate, failed=failed)


def test_a_failed_pass_is_reported_not_timed_and_ratios_pair_passes_of_one_round() -> None:
    passes = [
        _pass("alkstore-postgres", 0, 300.0),
        _pass("pgqueuer", 0, 100.0),
        _pass("rq", 0, None, "FAILED: stalled: 1 of 3 jobs ran, none in the last 120 s; lost 2"),
        _pass("alkstore-postgres", 1, 400.0),
        _pass("pgqueuer", 1, 400.0),
        _pass("rq", 1, 50.0),
    ]
    rows = {row[0]: row for row in bench.rows(passes, "drain")}
    assert rows["pgqueuer"][4:8] == ["250", "100–400", "2", "2.00× (1.00–3.00)"]
    assert rows["rq"][4] == "FAILED: stalled: 1 of 3 jobs ran, none in the last 120 s; lost 2"
    assert rows["rq"][5:8] == ["", "", ""], "a configuration with a failed pass shows no figure"
