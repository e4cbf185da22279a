"""The manifest that names an engine in any language (docs/certify-reference.md, "Any language").

Rule: a bad manifest is one line naming the file, the key and the rule, never
a traceback; paths in it are relative to it, so it works from any directory;
``alkstore certify`` names its default report after the manifest's directory.
If this fails, check alkstore_contract/wire/manifest.py and the registry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alkstore_cli.certify import report_name
from alkstore_contract.adapter import CrashableServerAdapter, EngineAdapter, NetworkedAdapter
from alkstore_contract.suite.registry import UnknownEngine, load_adapter
from alkstore_contract.wire.adapter import WireCrashableAdapter
from alkstore_contract.wire.manifest import load_manifest

BAD: tuple[tuple[str, str], ...] = (
    ('args = ["x"]\n', "command=None: must be a non-empty string"),
    ('command = "node"\nargs = "main.js"\n', "args='main.js': must be a list of strings"),
    ('command = "node"\nop_timeout_s = 0\n', "op_timeout_s=0: must be a number of seconds in (0, 3600]"),
    ('command = "node"\nflavour = 1\n', "unknown key 'flavour'"),
    ("command = \n", "is not TOML"),
)


@pytest.mark.parametrize(("text", "fault"), BAD)
def test_a_bad_manifest_is_one_line_naming_the_file_and_the_rule(tmp_path: Path, text: str, fault: str) -> None:
    path = tmp_path / "alkstore-engine.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UnknownEngine) as refused:
        load_adapter(str(path))
    message = str(refused.value)
    assert "\n" not in message
    assert str(path) in message
    assert fault in message


def test_a_missing_manifest_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UnknownEngine, match="cannot be read"):
        load_adapter(str(tmp_path / "nowhere" / "alkstore-engine.toml"))


def test_paths_are_relative_to_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    path = tmp_path / "engine" / "alkstore-engine.toml"
    path.write_text('command = "./bin/run"\ncwd = "bin/.."\nenv = { A = "1" }\n', encoding="utf-8")
    manifest = load_manifest(str(path))
    assert manifest.argv == (str(tmp_path / "engine" / "bin" / "run"),)
    assert manifest.cwd == tmp_path / "engine"
    assert manifest.env == {"A": "1"}


def test_the_default_report_is_named_after_the_manifests_directory() -> None:
    assert report_name("engines_under_test/alkstore_node/alkstore-engine.toml") == "alkstore_node"
    assert report_name("pkg.mod:adapter") == "pkg.mod_adapter"


def _typed(adapter: WireCrashableAdapter) -> tuple[EngineAdapter, NetworkedAdapter, CrashableServerAdapter]:
    """mypy holds the wire adapters of networked engines to the adapter protocols the rows ask for."""
    return adapter, adapter, adapter


def test_the_networked_wire_adapters_keep_the_adapter_protocols() -> None:
    assert _typed.__annotations__["adapter"] == "WireCrashableAdapter"
