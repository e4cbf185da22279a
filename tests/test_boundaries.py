"""The parts' import boundaries: the report reads what the suite publishes, never the suite's internals.

The rule (``alkstore_contract/report/model.py`` and docs/api.md, "Layout"): a
module of ``alkstore_contract/report/`` imports the contract's top-level
modules, the report's own modules, and of the suite only what
``alkstore_contract.suite`` itself publishes (its ``__all__``); never a module
inside the suite (``alkstore_contract.suite.verdicts``, ``…profiles``,
``…registry``), nor the kit or the wire part. The suite hands the report its
conclusions as ``alkstore_contract.report.model`` objects, so the dependency
runs one way. Every import counts: at the top, inside a function, and a constant
name given to ``importlib.import_module``.

If this fails, check: a report module grew an import of a suite module (hand the
value over through ``report/model.py`` instead, computed in
``suite/publish.py``), or the suite's ``__all__`` lost a name the report uses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import alkstore_contract.suite

PACKAGE = Path(__file__).resolve().parents[1] / "alkstore_contract"
REPORT = sorted((PACKAGE / "report").rglob("*.py"))
CONTRACT_MODULES = frozenset(path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__")
"""The contract part: the package's top-level modules (``alkstore_contract.types``, ``…adapter``, …)."""


def imported(source: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """Every import in ``source``: (line, module, the names taken from it), wherever it sits in the module."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            yield node.lineno, node.module, tuple(alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value, ()


def report_violations(source: str) -> list[str]:
    """What ``source``, read as a report module, imports across the boundary: one line per import."""
    published = frozenset(alkstore_contract.suite.__all__)
    found: list[str] = []
    for line, module, names in imported(source):
        parts = module.split(".")
        if parts[0] != "alkstore_contract" or len(parts) == 1:
            continue
        if parts[1] == "report" or (len(parts) == 2 and parts[1] in CONTRACT_MODULES):
            continue
        if module == "alkstore_contract.suite" and names and set(names) <= published:
            continue
        taken = f" ({', '.join(names)})" if names else ""
        found.append(f"line {line}: {module}{taken}")
    return found


@pytest.mark.parametrize("module", REPORT, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_report_imports_only_what_the_suite_publishes(module: Path) -> None:
    violations = report_violations(module.read_text(encoding="utf-8"))
    assert not violations, (
        f"alkstore_contract/{module.relative_to(PACKAGE)} imports across the report's boundary: "
        f"{'; '.join(violations)}. The report reads only the contract, its own modules and what "
        f"alkstore_contract.suite publishes ({', '.join(alkstore_contract.suite.__all__)}); hand anything "
        "else over through alkstore_contract/report/model.py, filled in by alkstore_contract/suite/publish.py"
    )


@pytest.mark.parametrize(
    "source",
    [
        "from alkstore_contract.suite.verdicts import EngineVerdict\n",
        "import alkstore_contract.suite.profiles\n",
        "from alkstore_contract.suite import registry\n",
        "def later():\n    from alkstore_contract.suite.row import SUITE_VERSION\n",
        "import importlib\nimportlib.import_module('alkstore_contract.suite.verdicts')\n",
        "from alkstore_contract.kit import KitStore\n",
    ],
)
def test_the_check_sees_an_import_of_the_suites_internals(source: str) -> None:
    assert report_violations(source), f"the boundary check let through: {source!r}"


@pytest.mark.parametrize(
    "source",
    [
        "from alkstore_contract import CONTRACT_VERSION\n",
        "from alkstore_contract.adapter import Capability\n",
        "from alkstore_contract.report.model import EngineEntry\n",
        "from alkstore_contract.suite import UnknownEngine, load_adapter\n",
        "import json\n",
    ],
)
def test_the_check_lets_through_what_the_rule_allows(source: str) -> None:
    assert report_violations(source) == []


def test_the_suite_publishes_the_names_it_lists() -> None:
    missing = [name for name in alkstore_contract.suite.__all__ if not hasattr(alkstore_contract.suite, name)]
    assert missing == []
