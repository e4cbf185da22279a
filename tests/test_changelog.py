"""CHANGELOG.md keeps its format and names every deprecation and replacement the code knows (rule: API-2).

The changelog is written by hand; these checks hold it to the code: its newest
release is the package's version, every name that warns as deprecated has a
row saying what to use instead (the same replacement its warning names), and
every entry of ``alkstore_contract._moved.REPLACED`` — the table an adapter that
fails to load is told its replacement from — has its row too.

If one of these fails, check: you bumped the version in pyproject.toml without a
changelog section (or the other way round); you deprecated or replaced a name
and the changelog's *Deprecated* or *Removed* table lacks its row.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from alkstore_contract import __version__
from alkstore_contract._moved import MOVED, REPLACED
from tools import public_api

CHANGELOG = public_api.REPO / "CHANGELOG.md"
TEXT = CHANGELOG.read_text(encoding="utf-8")
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\](?: - (?:\d{4}-\d{2}-\d{2}|Unreleased))?$", re.MULTILINE)
KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
"""Keep a Changelog's kinds of change, the only subsections a release has."""


def rows(text: str) -> set[tuple[str, str]]:
    """``(old, new)`` of every table row ``| `old` … | `new` |``."""
    return set(re.findall(r"^\| `([\w.]+)`[^|]* \| `([\w.]+)` \|", text, re.MULTILINE))


def test_api2_the_changelog_follows_keep_a_changelog() -> None:
    assert TEXT.startswith("# Changelog\n")
    headings = re.findall(r"^(##+) (.+)$", TEXT, re.MULTILINE)
    assert headings[0][0] == "##"
    for level, title in headings:
        if level == "##":
            assert RELEASE.match(f"## {title}"), (
                f"a release heading is '## [X.Y.Z] - YYYY-MM-DD' (or Unreleased): {title}"
            )
        else:
            assert (level, title) in {("###", kind) for kind in KINDS}, f"not a Keep a Changelog kind: {title}"


def test_api2_the_newest_release_is_the_packages_version() -> None:
    with (public_api.REPO / "pyproject.toml").open("rb") as file:
        declared = tomllib.load(file)["project"]["version"]
    newest = RELEASE.findall(TEXT)[0]
    assert newest == declared == __version__


@pytest.mark.parametrize("name", [name for name, _ in public_api.deprecated(public_api.read_pin())], ids=str)
def test_api2_every_deprecated_name_has_its_row(name: public_api.Name) -> None:
    _, messages = public_api.resolve(name)
    instead = re.search(r"(?:moved to|use) ([\w.]+)", messages[-1])
    assert instead is not None
    old = name.key.replace(":", ".")
    assert (old, instead[1]) in rows(TEXT), f"CHANGELOG.md has no row | `{old}` | `{instead[1]}` |"


@pytest.mark.parametrize(("old", "new"), sorted({**MOVED, **REPLACED}.items()))
def test_api2_every_replacement_an_unloadable_adapter_is_told_is_in_the_changelog(old: str, new: str) -> None:
    assert (old, new) in rows(TEXT), f"CHANGELOG.md has no row | `{old}` | `{new}` |"


def test_api2_the_row_reader_sees_a_missing_row() -> None:
    assert rows("| `a.b` | `a.c` |\n| `x.y` (note) | `z` |\n") == {("a.b", "a.c"), ("x.y", "z")}
    assert ("alkstore_contract.wire", "somewhere.else") not in rows(TEXT)
