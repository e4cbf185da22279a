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

A second rule: no import circle inside ``alkstore_contract``, a type-only import
included, but for the 0.1 shims' one (``SHIM_CIRCLE``), which ends with them.
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


def contract_imports() -> dict[str, set[str]]:
    """Each module of ``alkstore_contract`` → the package's modules it imports, wherever the import sits.

    An import under ``if TYPE_CHECKING:`` counts too: a type checker follows it, so a circle through one
    is a circle a reader and a type checker must untangle all the same.
    """
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for _, module, names in imported(path.read_text(encoding="utf-8")):
            found |= {module} & modules.keys()
            found |= {f"{module}.{taken}" for taken in names} & modules.keys()
        graph[name] = found - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each strongly connected set of two or more modules, sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            members = [stack.pop()]
            while members[-1] != module:
                members.append(stack.pop())
            if len(members) > 1:
                found.append(sorted(members))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(found)


SHIM_CIRCLE = ["alkstore_contract._pre_kit", "alkstore_contract.resolution"]
"""The one circle allowed: ``resolution`` names the 0.1 shims for type checkers only (``_moved`` serves them at
run time), and the shims compute through ``resolution``. It goes with the shims, in ``_moved.REMOVED_IN``."""


def test_the_contract_has_no_import_circle() -> None:
    """No module of ``alkstore_contract`` imports, even for types only, a module that imports it back.

    If this fails, check: a lower module (``validation``, ``errors``) grew an import of one built on it
    (``types``, ``resolution``): name the type by what it stands for, or move the shared piece down.
    """
    found = [circle for circle in circles(contract_imports()) if circle != SHIM_CIRCLE]
    assert not found, f"import circles in alkstore_contract: {found}"


def test_the_circle_check_sees_a_circle_through_a_type_only_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
