"""An adapter that cannot be loaded is one line: the engine, where it was loaded from, the error, the fix (rule: API-3).

``alkstore_contract.suite.registry.load_adapter`` turns whatever the author's
code raises while it loads into an ``UnknownEngine`` whose message is that one
line; the plugin makes it a pytest usage error and ``alkstore certify`` exits 2
with it (``tests/test_plugin.py``, ``tests/test_cli.py`` run those as a user
would). A name public in an earlier release gets its replacement in the line.

If one of these fails, check ``alkstore_contract/suite/load_errors.py`` (the
line) and ``load_adapter``'s ``except`` clauses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from alkstore_contract import _pre_kit, resolution
from alkstore_contract.suite.registry import UnknownEngine, load_adapter

ADAPTERS = {
    "import_error": ("from alkstore_contract.wire import open_wire\n", "ImportError: "),
    "syntax_error": ("adapter = (\n", "SyntaxError"),
    "raises_at_import": ("raise RuntimeError('no DSN configured')\n", "RuntimeError: no DSN configured"),
    "no_adapter": ("adapter_ = None\n", "AttributeError: module 'no_adapter' has no attribute 'adapter'"),
    "raising_member": (
        "class A:\n    @property\n    def capabilities(self):\n        raise KeyError('caps')\nadapter = A()\n",
        "KeyError: 'caps'",
    ),
}


def _load_failure(spec: str) -> str:
    with pytest.raises(UnknownEngine) as caught:
        load_adapter(spec)
    message = str(caught.value)
    assert "\n" not in message, f"[API-3] more than one line: {message!r}"
    return message


@pytest.fixture
def adapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, (source, _) in ADAPTERS.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_api3_an_adapter_that_cannot_load_is_one_line_naming_engine_source_and_error(adapters: Path, name: str) -> None:
    message = _load_failure(f"{name}:adapter")
    assert message.startswith(f"engine '{name}:adapter' (")
    assert ADAPTERS[name][1] in message.replace("ModuleNotFoundError: ", "ImportError: ")  # its subclass


def test_api3_the_line_points_at_the_authors_line(adapters: Path) -> None:
    assert f"(at {adapters / 'import_error.py'}:1)" in _load_failure("import_error:adapter")
    assert "syntax_error.py, line 1)" in _load_failure("syntax_error:adapter")


def test_api3_a_name_moved_since_an_earlier_release_is_told_its_replacement(adapters: Path) -> None:
    message = _load_failure("import_error:adapter")
    assert "— alkstore_contract.wire" in message
    assert "use alkstore_contract.suite.network" in message
    assert "see CHANGELOG.md" in message


def test_api3_a_removed_helper_is_told_its_replacement_once_its_shim_is_gone(
    adapters: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an 0.1 adapter meets once the shims are removed: the line names ``NewJobs``."""
    (adapters / "pre_kit_adapter.py").write_text("from alkstore_contract.resolution import NewJob\n", encoding="utf-8")
    monkeypatch.delitem(sys.modules, "pre_kit_adapter", raising=False)
    monkeypatch.delitem(vars(resolution), "NewJob", raising=False)
    monkeypatch.delattr(_pre_kit, "NewJob")
    message = _load_failure("pre_kit_adapter:adapter")
    assert "ImportError: cannot import name 'NewJob' from 'alkstore_contract.resolution'" in message
    assert message.endswith(
        "— alkstore_contract.resolution.NewJob was public in an earlier alkstore release; "
        "use alkstore_contract.resolution.NewJobs instead (see CHANGELOG.md)"
    )


def test_api3_an_error_of_the_authors_own_gets_no_hint(adapters: Path) -> None:
    assert "was public" not in _load_failure("raises_at_import:adapter")
    (adapters / "needs_numpyish.py").write_text("import numpyish_not_installed\n", encoding="utf-8")
    message = _load_failure("needs_numpyish:adapter")
    assert "ModuleNotFoundError: No module named 'numpyish_not_installed'" in message
    assert "was public" not in message


def test_api3_an_entry_point_whose_target_fails_names_the_entry_point(
    adapters: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = adapters / "broken_engine-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-engine\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[alkstore.engines]\nbroken = syntax_error:adapter\n", encoding="utf-8")
    message = _load_failure("broken")
    assert message.startswith("engine 'broken' (entry point alkstore.engines: syntax_error:adapter) cannot be loaded: ")
    assert "SyntaxError" in message


def test_api3_a_missing_entry_point_names_the_group_and_the_installed_engines() -> None:
    message = _load_failure("nope")
    assert message.startswith(
        "unknown engine 'nope': no alkstore.engines entry point of that name; installed engines: "
    )
    assert "mem" in message
