"""The package's layout by part, and the old paths that keep importing for one release (rule: API-1).

The tree shows five parts — the contract (the top-level modules), the kit, the
suite, the report and the wire — and each module's
docstring says which one it belongs to, so a reader who opens any file knows
whether an engine may import it. The modules that moved keep their old paths
for one minor release through ``alkstore_contract._moved``: each old path
imports, warns with a ``DeprecationWarning`` naming the new path, and hands out
the very module object at the new path (so a patch through either name reaches
both).

The wheel carries what users run and nothing else: the packages they import
and every module an entry point names, but none of the project's tools
(``tools/``) or the libraries' reproduction scripts (``ecosystem/**/reproduce*``).
The Postgres engine's test servers ship inside it (``alkstore_postgres.provision``,
``…provision_skewed``): ``alkstore certify postgres`` crashes and skews servers of its own from an
install too. The test builds the wheel with hatchling, as pip would, and finds the MIT license in it.

If one of these fails, check: a new module's docstring lacks its part's phrase
("Part of the suite."); an entry of ``_moved.MOVED`` points at a module that was
renamed again; the finder is no longer installed by ``alkstore_contract``; or
pyproject's ``[tool.hatch.build.targets.wheel]`` (``packages``, ``exclude``)
lets in, or leaves out, what the wheel test names.
"""

from __future__ import annotations

import ast
import configparser
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from alkstore_contract import _moved

PACKAGE = Path(__file__).resolve().parents[1] / "alkstore_contract"
PARTS = ("contract", "kit", "suite", "report", "wire")
PHRASE = re.compile(r"(?i)\bpart of the (\w+)\b|\bthe (\w+) part\b")
WHOLE_PACKAGE = ("__init__.py", "_moved.py")
"""Modules of the package as a whole: the top ``__init__`` names every part, ``_moved`` serves the old paths of all."""
MODULES = sorted(
    path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py") if str(path.relative_to(PACKAGE)) not in WHOLE_PACKAGE
)


def part_of(module: Path) -> str:
    """The part a module belongs to by where it sits: a top-level module is the contract's."""
    return "contract" if len(module.parts) == 1 else module.parts[0]


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_api1_every_module_docstring_names_its_part(module: Path) -> None:
    docstring = ast.get_docstring(ast.parse((PACKAGE / module).read_text(encoding="utf-8"))) or ""
    named = [next(group for group in match.groups() if group) for match in PHRASE.finditer(docstring)]
    assert part_of(module) in PARTS, f"{module}: a subpackage that is no part ({', '.join(PARTS)})"
    assert named[:1] == [part_of(module)], (
        f"[API-1] alkstore_contract/{module}: its docstring should say it is part of the {part_of(module)} "
        f"(e.g. 'Part of the {part_of(module)}.'), and name that part first; it names {named or 'none'}"
    )


def _fresh_import(name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[warnings.WarningMessage]]:
    """Import ``name`` as a first import would, recording the warnings (the cached entry is put back after)."""
    monkeypatch.delitem(sys.modules, name, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    return module, list(caught)


OLD_PATHS = [*sorted(_moved.MOVED), "alkstore_contract.rows.claim_order", "alkstore_contract.rows.durability.kill"]
"""Every old path, and submodules of an old package path (they follow the package)."""


@pytest.mark.parametrize("old", OLD_PATHS)
def test_api1_an_old_module_path_imports_warns_and_is_the_new_module(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    new = _moved.new_path(old)
    assert new is not None
    module, caught = _fresh_import(old, monkeypatch)
    assert module is importlib.import_module(new), f"[API-1] {old} is not the module object at {new}"
    assert all(issubclass(w.category, DeprecationWarning) for w in caught)
    own = [str(w.message) for w in caught if str(w.message).startswith(f"{old} moved to {new}:")]
    assert len(own) == 1, f"[API-1] import {old} warns {[str(w.message) for w in caught]}, none naming {new}"
    assert f"alkstore {_moved.REMOVED_IN}" in own[0]


def test_api1_an_old_path_warns_at_the_importing_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warning points at the caller's import, so ``-W error::DeprecationWarning`` names the line to change."""
    monkeypatch.delitem(sys.modules, "alkstore_contract.harness", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile("import alkstore_contract.harness", "an_engine.py", "exec"), {})
    assert [(w.filename, w.lineno) for w in caught] == [("an_engine.py", 1)]


MOVES = [
    ("alkstore_contract.suite", "alkstore_contract.suite.row", ["Row", "all_rows", "ROW_MODULES", "SUITE_VERSION"]),
    (
        "alkstore_contract.report",
        "alkstore_contract.report.build",
        ["build_report", "write_report", "load_report", "RowResult", "EngineInfo", "SCHEMA_PATH"],
    ),
    ("alkstore_contract.validation", "alkstore_contract.types", ["JobId", "Duration"]),
]
"""Each move once: the old module, the new home, and the names that went there."""
OLD_NAMES = [(package, name, home) for package, home, names in MOVES for name in names]
"""Names of the two old modules whose path is now a package's, and the type aliases that left validation."""


@pytest.mark.parametrize(("package", "name", "home"), OLD_NAMES, ids=lambda value: str(value).rpartition(".")[2])
def test_api1_an_old_name_imports_warns_and_is_the_new_one(
    package: str, name: str, home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = importlib.import_module(package)
    monkeypatch.delitem(vars(module), name, raising=False)  # the first access caches it; a fresh one warns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(home), name)
    assert [str(w.message).split(":")[0] for w in caught] == [f"{package}.{name} moved to {home}.{name}"]
    assert all(issubclass(w.category, DeprecationWarning) for w in caught)


def test_api1_new_paths_import_without_a_warning() -> None:
    """What the docs show authors importing now never warns (a subprocess: this one has imported old paths)."""
    imports = "; ".join(f"import {new}" for new in sorted(set(_moved.MOVED.values())))
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", imports],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


ROOT = PACKAGE.parent
USER_PACKAGES = (
    "alkstore_cli",
    "alkstore_contract",
    "alkstore_contract/suite",
    "alkstore_contract/report",
    "alkstore_faults",
    "alkstore_worker",
    "alkstore_sqlite",
    "alkstore_mem",
    "alkstore_postgres",
    "alkstore_ecosystem_kit",
    "alkstore_pgqueuer",
    "alkstore_procrastinate",
)
"""What an installed user imports or runs: the command, the contract and its parts, the worker, the faults harness, the
engines."""
NOT_SHIPPED = re.compile(r"(^|/)reproduce[^/]*$|^tools/")
"""The project's own tools and the libraries' reproduction scripts."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel of this checkout, built once by hatchling (the build backend pip would run), offline."""
    if importlib.util.find_spec("hatchling") is None:
        reason = "hatchling is not installed (it is in the test extra: pip install -e '.[test]')"
        if os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(reason + " — ALKSTORE_REQUIRE=1 makes a check that cannot run a failure")
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "--directory", str(out)]
    built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("*.whl")
    return zipfile.ZipFile(found)


def test_the_wheel_carries_no_tools_or_reproductions(wheel: zipfile.ZipFile) -> None:
    shipped = [name for name in wheel.namelist() if NOT_SHIPPED.search(name)]
    assert shipped == [], f"the wheel ships what only a checkout runs: {shipped}"


def test_the_wheel_carries_every_package_users_import_and_the_engine_s_test_servers(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = [package for package in USER_PACKAGES if f"{package}/__init__.py" not in names]
    assert missing == [], f"the wheel lacks packages users import: {missing}"
    servers = {"alkstore_postgres/provision.py", "alkstore_postgres/provision_skewed.py"}
    assert servers <= names, "the Postgres adapter's crash and clock hooks import these from an install too"


def test_every_entry_point_names_a_module_the_wheel_carries(wheel: zipfile.ZipFile) -> None:
    """The console script, the pytest plugin and each engine: what ``pip install alkstore`` makes users run."""
    (listed,) = [name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt")]
    points = configparser.ConfigParser(delimiters=("=",))
    points.read_string(wheel.read(listed).decode())
    names = set(wheel.namelist())
    absent = []
    for section in points.sections():
        for target in points[section].values():
            path = target.split(":")[0].strip().replace(".", "/")
            if f"{path}.py" not in names and f"{path}/__init__.py" not in names:
                absent.append(f"{section}: {target}")
    assert absent == [], f"entry points naming modules the wheel lacks: {absent}"


def test_the_license_ships_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    """The MIT license the metadata declares, word for word, in the wheel's dist-info."""
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) 2026 the alkstore authors\n")
    shipped = [name for name in wheel.namelist() if name.endswith(".dist-info/licenses/LICENSE")]
    assert len(shipped) == 1
    assert wheel.read(shipped[0]).decode("utf-8") == license_text
    metadata = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in wheel.read(metadata).decode("utf-8").splitlines()
