"""The public API is written down and pinned: docs/api.md matches the code, and no public name just vanishes.

Rule: API-2.

``tests/public_api_names.txt`` pins every public name (``tools/public_api.py``
says what counts). A pinned name must keep importing — as it is, or deprecated
with a warning naming its replacement — until a person takes it out after its
release of deprecation and names it under *Removed* in CHANGELOG.md.

If one of these fails, check: you renamed or deleted a public name (restore it,
or keep the old name importing with a ``DeprecationWarning``, see docs/api.md);
you added one (``python -m tools.public_api`` pins it and regenerates the
page); or you changed a module's summary line (regenerate the page).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tools import public_api
from tools.public_api import Name


def test_api2_docs_api_md_matches_the_code() -> None:
    text = public_api.PAGE.read_text(encoding="utf-8")
    assert public_api.regenerate(text) == text, "docs/api.md drifted from the code: run python -m tools.public_api"


def test_api2_every_public_name_is_pinned() -> None:
    pinned = {name.key for name in public_api.read_pin()}
    unpinned = [name.key for name in public_api.current() if name.key not in pinned]
    assert not unpinned, f"public names not in {public_api.PIN.name} (python -m tools.public_api adds them): {unpinned}"


def gone(pinned: list[Name]) -> list[str]:
    """The pinned names that no longer import, each with what importing it raised."""
    found: list[str] = []
    for name in pinned:
        try:
            public_api.resolve(name)
        except (ImportError, AttributeError) as exc:
            found.append(f"{name.key}: {type(exc).__name__}: {exc}")
    return found


@pytest.mark.parametrize("name", public_api.read_pin(), ids=lambda name: name.key)
def test_api2_a_pinned_name_still_imports(name: Name) -> None:
    assert not gone([name]), (
        f"[API-2] {name.key} is pinned public but no longer imports: restore it, or keep it importing for one "
        "minor release with a DeprecationWarning naming its replacement (docs/api.md, 'Deprecate, never break')"
    )


def test_api2_the_pin_check_can_fail() -> None:
    """A name removed without a deprecation, and a module gone, are both caught."""
    missing = gone([Name("alkstore_contract.types", "JobIdentifier"), Name("alkstore_contract.no_such_module")])
    assert [line.split(":")[0] + ":" + line.split(":")[1] for line in missing] == [
        "alkstore_contract.types:JobIdentifier",
        "alkstore_contract.no_such_module: ModuleNotFoundError",
    ]


def test_api2_deprecated_names_warn_and_the_rest_do_not() -> None:
    """Only the names under 'Deprecated names' in docs/api.md warn; a current public name never does."""
    deprecated = {name.key for name, _ in public_api.deprecated(public_api.read_pin())}
    for name in public_api.current():
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            public_api.resolve(name)
        assert name.key not in deprecated
    page = public_api.PAGE.read_text(encoding="utf-8")
    assert all(f"| `{key}` |" in page for key in deprecated)


def test_api2_every_module_of_the_contract_and_the_kit_is_listed() -> None:
    """A new module in the contract part or the kit is public by where it sits, so the page must list it."""
    package = Path(public_api.REPO / "alkstore_contract")
    on_disk = {
        ".".join(("alkstore_contract", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
        for pattern in ("*.py", "kit/*.py")
        for path in package.glob(pattern)
        if not path.name.startswith("_") or path.name == "__init__.py"
    }
    assert on_disk == {*public_api.CONTRACT, *public_api.KIT}
