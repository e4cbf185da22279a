"""The parts' import boundaries: each part imports only the parts below it, and no circle inside the contract.

The rule (docs/api.md, "The layout"): the shipped packages stand in layers (``LAYERS``), lowest first — the
contract; the kit and the report; the engines and the wire; the suite, the worker and the libraries' kit; the
faults harness and the libraries' adapters; the ``alkstore`` command on top. A module imports its own part and
the parts of lower layers, never a part of its own layer or above. Every import counts: at the top, inside a
function, and a constant name given to ``importlib.import_module``. Following imports through therefore never
runs back up, and parts form no circle. The suite hands the report its conclusions as
``alkstore_contract.report.model`` objects, so the report never reads the suite.

If this fails, check: a lower part grew an import of one above it — move the shared piece down, or hand the
value over through a lower part's type.

A second rule: no import circle inside ``alkstore_contract``, a type-only import
included, but for the 0.1 shims' one (``SHIM_CIRCLE``), which ends with them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import alkstore_contract.suite

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "alkstore_contract"
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


LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("the contract", frozenset({"alkstore_contract"})),
    ("the kit and the report", frozenset({"alkstore_contract.kit", "alkstore_contract.report"})),
    (
        "the engines and the wire",
        frozenset({"alkstore_sqlite", "alkstore_mem", "alkstore_postgres", "alkstore_contract.wire"}),
    ),
    (
        "the suite, the worker and the libraries' kit",
        frozenset({"alkstore_contract.suite", "alkstore_worker", "alkstore_ecosystem_kit"}),
    ),
    (
        "the faults harness and the libraries' adapters",
        frozenset({"alkstore_faults", "alkstore_pgqueuer", "alkstore_procrastinate"}),
    ),
    ("the command", frozenset({"alkstore_cli"})),
)
"""The parts, lowest first: a part imports only parts of a lower layer (and itself), so no import runs back up and
no circle can form between parts, whichever chain of imports one follows. The report sits below the suite: it owns
the report's format (``report/model.py``), which the suite fills in, and it reads and renders reports without the
suite; the command on top dispatches to every part."""
PARTS = {part: rank for rank, (_, parts) in enumerate(LAYERS) for part in parts}
SOURCES = {
    "alkstore_cli": ROOT / "alkstore_cli",
    "alkstore_contract": PACKAGE,
    "alkstore_faults": ROOT / "alkstore_faults",
    "alkstore_worker": ROOT / "alkstore_worker",
    "alkstore_sqlite": ROOT / "reference_engine" / "alkstore_sqlite",
    "alkstore_mem": ROOT / "engines_under_test" / "alkstore_mem",
    "alkstore_postgres": ROOT / "engines_under_test" / "alkstore_postgres",
    "alkstore_ecosystem_kit": ROOT / "ecosystem" / "kit" / "alkstore_ecosystem_kit",
    "alkstore_pgqueuer": ROOT / "ecosystem" / "pgqueuer" / "adapter" / "alkstore_pgqueuer",
    "alkstore_procrastinate": ROOT / "ecosystem" / "procrastinate" / "adapter" / "alkstore_procrastinate",
}
"""Every package the wheel ships (tests/test_layout.py), where its source lives."""


def part_of(module: str) -> str | None:
    """The part ``module`` belongs to (a name in ``LAYERS``), or ``None`` for a module of no part of ours."""
    parts = module.split(".")
    if parts[0] == "alkstore_contract" and len(parts) > 1 and f"alkstore_contract.{parts[1]}" in PARTS:
        return f"alkstore_contract.{parts[1]}"
    return parts[0] if parts[0] in PARTS else None


def layer_violations(module: str, source: str) -> list[str]:
    """What ``source``, read as the module ``module``, imports from its own layer's other parts or above it."""
    importer = part_of(module)
    assert importer is not None, f"{module} belongs to no part of LAYERS"
    found = []
    for line, target, _ in imported(source):
        imported_part = part_of(target)
        if imported_part is None or imported_part == importer or PARTS[imported_part] < PARTS[importer]:
            continue
        found.append(f"line {line}: {target} ({LAYERS[PARTS[imported_part]][0]})")
    return found


def shipped_modules() -> Iterator[tuple[str, Path]]:
    """Every module of every shipped package: its dotted name and its file (a package moved without this list
    following it fails here, rather than leaving its imports unchecked)."""
    for package, root in SOURCES.items():
        assert (root / "__init__.py").is_file(), f"{package}: no package at {root}: update SOURCES"
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            yield ".".join([package, *(parts[:-1] if parts[-1] == "__init__" else parts)]), path


@pytest.mark.parametrize(("module", "path"), list(shipped_modules()), ids=lambda value: str(value))
def test_no_part_imports_a_part_above_it_or_beside_it(module: str, path: Path) -> None:
    """Every import counts: at the top, inside a function, under ``TYPE_CHECKING``, and a constant name given to
    ``importlib.import_module``.

    If this fails, check: a lower part grew an import of one above it (the engine imported the harness; the
    report imported the suite): move the shared piece down to the lower part, or hand the value over through a
    lower part's type (``report/model.py``, filled in by ``suite/publish.py``).
    """
    violations = layer_violations(module, path.read_text(encoding="utf-8"))
    assert not violations, (
        f"{path.relative_to(ROOT)} ({LAYERS[PARTS[str(part_of(module))]][0]}) imports upward or sideways: "
        f"{'; '.join(violations)}. The layers, lowest first: {' < '.join(name for name, _ in LAYERS)}"
    )


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("alkstore_contract.report.render", "from alkstore_contract.suite.verdicts import EngineVerdict\n"),
        ("alkstore_contract.report.read", "import alkstore_contract.suite.profiles\n"),
        ("alkstore_contract.types", "from alkstore_contract.kit import KitStore\n"),
        ("alkstore_postgres.adapter", "def later():\n    from alkstore_faults.brokers import Broker\n"),
        ("alkstore_worker.app", "import importlib\nimportlib.import_module('alkstore_cli.main')\n"),
        ("alkstore_sqlite.driver", "from alkstore_mem import open_store\n"),
        ("alkstore_faults.cli", "from alkstore_cli import main\n"),
    ],
)
def test_the_layer_check_sees_an_upward_or_sideways_import(module: str, source: str) -> None:
    assert layer_violations(module, source), f"the layer check let {module} through: {source!r}"


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("alkstore_contract.report.read", "from alkstore_contract.report.model import EngineEntry\n"),
        ("alkstore_contract.suite.publish", "from alkstore_contract.report.model import EngineEntry\n"),
        ("alkstore_worker.sources", "from alkstore_postgres import open_store\n"),
        ("alkstore_cli.main", "from alkstore_faults import cli\n"),
        ("alkstore_contract.kit.front", "import json\n"),
    ],
)
def test_the_layer_check_lets_through_what_the_rule_allows(module: str, source: str) -> None:
    assert layer_violations(module, source) == []


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
