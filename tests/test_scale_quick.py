"""The scale benchmark's ``--quick`` mode on SQLite and mem: it runs end to end and reports every figure.

``benchmarks/scale.py --quick`` builds tiny queues (backlogs of 200 and 1,000,
a churn of 1,000 jobs acked and one retried, dead jobs kept for a purge),
times every figure once and writes its table, JSON and plot. This test runs it
as a user would, so a change that breaks the benchmark fails CI; it asserts
nothing about speed. The plot needs matplotlib (the ``bench`` extra): where it
is not installed, as in the project's test environment, the run draws none.
"""

from __future__ import annotations

import importlib.util
import json
import runpy
import subprocess
import sys
from pathlib import Path

SCALE = Path(__file__).resolve().parent.parent / "benchmarks" / "scale.py"
TIMEOUT_S = 180


def test_quick_scale_run_reports_every_figure(tmp_path: Path) -> None:
    out_json, out_png = tmp_path / "scale.json", tmp_path / "scale.png"
    command = [sys.executable, str(SCALE), "--quick", "--engines", "sqlite,mem"]
    draws = importlib.util.find_spec("matplotlib") is not None
    done = subprocess.run(
        [*command, "--json", str(out_json), *(["--png", str(out_png)] if draws else [])],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"scale.py --quick failed ({done.returncode}):\n{(done.stdout + done.stderr)[-6000:]}"
    assert "| sqlite | claim_one+ack |" in done.stdout, done.stdout
    results = {result["engine"]: result for result in json.loads(out_json.read_text())["results"]}
    assert set(results) == {"sqlite", "mem"}
    for engine, result in results.items():
        kinds = [scene["kind"] for scene in result["scenes"]]
        assert kinds == ["backlog", "backlog", "churn", "retry-churn", "kept", "kept"], (engine, kinds)
        for scene in result["scenes"]:
            assert scene["figures"], (engine, scene["label"])
            assert all(figure["median"] > 0 for figure in scene["figures"].values()), (engine, scene)
            shares = [share for figure in scene["figures"].values() for share in figure["full_gc_shares"]]
            assert shares, (engine, scene)
            assert all(0 <= share < 1 for share in shares), (engine, scene)
    assert results["sqlite"]["scenes"][0]["bytes_per_job_on_disk"] > 0
    assert all(size > 0 for size in results["mem"]["mem_bytes_per_job"].values())
    assert out_png.exists() == draws
    if draws:
        assert out_png.stat().st_size > 0


def test_the_full_collections_table_shows_the_windows_they_took_and_the_ratio_without_them() -> None:
    """A full collection that took half of one run of a figure is shown, with the ratio it would have had."""
    sys.path.insert(0, str(SCALE.parent))
    try:
        gc_table = runpy.run_path(str(SCALE))["_gc_table"]
    finally:
        sys.path.remove(str(SCALE.parent))

    def figure(runs: list[float], shares: list[float]) -> dict[str, object]:
        return {"median": sorted(runs)[1], "runs": runs, "full_gc_shares": shares}

    base = {"label": "backlog 10k", "kind": "backlog", "figures": {"get_job": figure([100, 100, 100], [0, 0, 0])}}
    big = {"label": "backlog 1M", "kind": "backlog", "figures": {"get_job": figure([50, 50, 100], [0.5, 0.5, 0])}}
    table = gc_table([{"engine": "mem", "scenes": [base, big]}])
    assert "| mem | backlog 1M | get_job | 50%, 50%, 0% | 1.00× |" in table, table
    assert "backlog 10k" not in table, table
    assert gc_table([{"engine": "mem", "scenes": [base]}]) == ""
