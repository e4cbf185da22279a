"""A suite run in a pytest process of its own keeps the plugins its caller's run was started with.

Why: ``run_suite`` used to set the child's ``PYTHONPATH`` to the repository
alone. A whole run wrapped in a profiler (``PYTEST_ADDOPTS="-p prof"`` with
``prof`` on ``PYTHONPATH``) then handed the child a plugin it could not
import: pytest stopped at once with exit status 4, wrote no report, and the
test reading it failed with ``FileNotFoundError`` and none of the child's
output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite_subprocess import run_suite

PLUGIN = """
from pathlib import Path


def pytest_sessionstart(session):
    Path(__file__).with_name("loaded").write_text("yes", encoding="utf-8")
"""


def test_a_plugin_the_callers_pythonpath_finds_is_loaded_and_the_report_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "outer_plugin.py").write_text(PLUGIN, encoding="utf-8")
    scratch = tmp_path / "run"
    scratch.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(plugins))
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p outer_plugin")
    engine, _ = run_suite(scratch, "mem", "-k", "enqueue_opts_resolution")
    assert engine["name"] == "mem"
    assert (plugins / "loaded").read_text(encoding="utf-8") == "yes"
