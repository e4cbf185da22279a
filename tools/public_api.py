"""docs/api.md, generated from the code: every public name with its module, by part, and what is deprecated.

``python -m tools.public_api`` rewrites the page's generated blocks and adds
names that became public to the pin, ``tests/public_api_names.txt``; it never
takes a name out of the pin. ``tests/test_public_api.py`` fails when the page
drifts from the code and when a pinned name no longer imports, so a name
leaves only by the deprecation rule of docs/api.md: it warns for one minor
release, then a person takes it out of the pin and names it in CHANGELOG.md.

What is public (docs/api.md says the same): in the contract part and the kit,
every name a module lists in ``__all__``, or without ``__all__`` every name
not starting with ``_`` that the module defines itself at its top level (not
the names it imports, not type variables); in the suite and the report, the
entry points and the few names ``CURATED`` lists, since their modules are the
machinery that judges engines; the engines' packages' ``__all__``, and the worker runtime's.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import ModuleType, UnionType
from typing import Any, TypeVar, is_typeddict

from alkstore_contract._moved import new_path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "api.md"
PIN = REPO / "tests" / "public_api_names.txt"
BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated: \2 -->)", re.DOTALL)

CONTRACT = (
    "alkstore_contract",
    "alkstore_contract.adapter",
    "alkstore_contract.backoff",
    "alkstore_contract.clock",
    "alkstore_contract.errors",
    "alkstore_contract.hazards",
    "alkstore_contract.handles",
    "alkstore_contract.instants",
    "alkstore_contract.resolution",
    "alkstore_contract.surface",
    "alkstore_contract.types",
    "alkstore_contract.validation",
)
KIT = (
    "alkstore_contract.kit",
    "alkstore_contract.kit.driver",
    "alkstore_contract.kit.fast",
    "alkstore_contract.kit.front",
)
ENGINES = ("alkstore_sqlite", "alkstore_mem", "alkstore_postgres")
WORKER = ("alkstore_worker",)
COMMAND = ("alkstore_cli",)
CURATED: dict[str, tuple[str, ...]] = {
    "alkstore_contract.suite.plugin": (),
    "alkstore_contract.suite.registry": (
        "ENTRY_POINT_GROUP",
        "UnknownEngine",
        "installed_engine_names",
        "load_adapter",
    ),
    "alkstore_contract.report.build": ("SCHEMA_PATH", "load_report"),
    "alkstore_contract.report.read": ("ReportFileError", "read_report"),
}
"""The suite's and the report's public names: the pytest11 entry point (the module itself), the engine
registry an author's tooling may call, and the report's schema and readers."""
PARTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("contract", "What an engine and its adapter import: types, surface, errors, clock, rules.", CONTRACT),
    ("kit", "The public surface written once over a storage driver.", KIT),
    ("suite", "The pytest plugin and the engine registry (the rest of the suite is its own machinery).", ()),
    ("report", "The JSON report's schema and readers.", ()),
    ("engines", "The engines shipped in the alkstore distribution.", ENGINES),
    ("worker", "The worker runtime: tasks, `defer` and workers over any certified Python engine.", WORKER),
    ("command", "The `alkstore` command, on top of every part.", COMMAND),
)


@dataclass(frozen=True, slots=True)
class Name:
    """One public name: ``module:name``, or a module itself (``name`` empty)."""

    module: str
    name: str = ""

    @property
    def key(self) -> str:
        return f"{self.module}:{self.name}" if self.name else self.module

    @classmethod
    def parse(cls, key: str) -> Name:
        module, _, name = key.partition(":")
        return cls(module, name)


def _defined_at_top(module: ModuleType, imports: bool = False) -> list[str]:
    """Names the module's own source defines at its top level, in source order (and imports, if asked)."""
    tree = ast.parse(inspect.getsource(module))
    found: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                found.append(node.name)
            elif isinstance(node, ast.Assign):
                found.extend(target.id for target in node.targets if isinstance(target, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.append(node.target.id)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif imports and isinstance(node, ast.Import | ast.ImportFrom):
                found.extend((alias.asname or alias.name).partition(".")[0] for alias in node.names)

    visit(tree.body)
    return list(dict.fromkeys(found))


def public_names(module_name: str) -> list[str]:
    """The public names of one module by the rule above."""
    module = importlib.import_module(module_name)
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return list(listed)
    return [
        name
        for name in _defined_at_top(module)
        if not name.startswith("_") and name in vars(module) and not isinstance(vars(module)[name], TypeVar)
    ]


def current() -> list[Name]:
    """Every public name of the code as it is, part by part."""
    names: list[Name] = []
    for _, _, modules in PARTS:
        names += [Name(module, name) for module in modules for name in public_names(module)]
    for module, curated in CURATED.items():
        names += [Name(module, name) for name in curated] if curated else [Name(module)]
    return names


def resolve(name: Name) -> tuple[object, list[str]]:
    """What ``name`` is now, and the deprecation warnings importing it raised (an exception when it is gone)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if new_path(name.module) is not None:
            sys.modules.pop(name.module, None)  # an old path warns on its first import only
        module = importlib.import_module(name.module)
        if name.name and hasattr(module, "__getattr__") and name.name not in _defined_at_top(module, imports=True):
            vars(module).pop(name.name, None)  # a deprecated name caches itself when first asked for; ask afresh
        value = getattr(module, name.name) if name.name else module
    return value, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def kind(value: object) -> str:
    """A word for what a public name is."""
    if isinstance(value, ModuleType):
        return "module"
    if inspect.isclass(value):
        if issubclass(value, BaseException):
            return "exception"
        if issubclass(value, Enum):
            return "enum"
        if is_typeddict(value):
            return "typed dict"
        return "protocol" if getattr(value, "_is_protocol", False) else "class"
    if inspect.iscoroutinefunction(value):
        return "async function"
    if inspect.isfunction(value):
        return "function"
    if isinstance(value, UnionType):
        return "type alias"
    return "constant"


def _summary(module: str) -> str:
    doc = importlib.import_module(module).__doc__ or ""
    return inspect.cleandoc(doc).splitlines()[0] if doc else ""


def _source(module: str) -> str:
    """The module's file as a link from docs/."""
    path = Path(inspect.getfile(importlib.import_module(module))).resolve()
    return "../" + path.relative_to(REPO).as_posix()


def _module_lines(module: str, names: list[str]) -> Iterator[str]:
    yield f"### [`{module}`]({_source(module)})"
    yield ""
    yield _summary(module)
    yield ""
    for name in names:
        value, _ = resolve(Name(module, name))
        yield f"- `{name}` — {kind(value)}"
    yield ""


def render_names() -> str:
    """Every public name, part by part and module by module."""
    lines: list[str] = []
    for part, what, modules in PARTS:
        lines += [f"## The {part}", "", what, ""]
        listed = [(module, public_names(module)) for module in modules]
        listed += [(module, list(names)) for module, names in CURATED.items() if module.split(".")[1:2] == [part]]
        for module, names in listed:
            lines += _module_lines(module, names)
    return "\n".join(lines)


def deprecated(pinned: list[Name]) -> list[tuple[Name, str]]:
    """The pinned names that import with a ``DeprecationWarning``, each with that warning's text."""
    found: list[tuple[Name, str]] = []
    for name in pinned:
        try:
            _, messages = resolve(name)
        except (ImportError, AttributeError):
            continue
        if messages:
            found.append((name, messages[-1]))
    return found


_INSTEAD = re.compile(r"(?:moved to|use) ([\w.]+)")
_UNTIL = re.compile(r"stops working in alkstore ([\d.]+)")


def render_deprecated() -> str:
    """The deprecated names, what their warning says to use instead, and the release that removes them."""
    rows = ["| deprecated | use instead | removed in |", "|---|---|---|"]
    for name, message in deprecated(read_pin()):
        instead, until = _INSTEAD.search(message), _UNTIL.search(message)
        if instead is None or until is None:
            raise ValueError(f"{name.key}: its warning names no replacement or no release: {message!r}")
        rows.append(f"| `{name.key}` | `{instead[1]}` | {until[1]} |")
    return "\n".join(rows) + "\n"


RENDERERS = {"names": render_names, "deprecated": render_deprecated}


def regenerate(text: str) -> str:
    """``text`` with every generated block rendered afresh."""

    def replace(match: re.Match[str]) -> str:
        return f"{match.group(1)}{RENDERERS[match.group(2)]()}{match.group(4)}"

    return BLOCK.sub(replace, text)


def read_pin() -> list[Name]:
    lines = PIN.read_text(encoding="utf-8").splitlines()
    return [Name.parse(line.strip()) for line in lines if line.strip() and not line.startswith("#")]


def pin_with_new_names(text: str) -> str:
    """The pin file with every public name it lacks appended (none is ever removed here)."""
    pinned = {name.key for name in read_pin()}
    new = [name.key for name in current() if name.key not in pinned]
    return text + "".join(f"{key}\n" for key in new)


def main(*_: Any) -> int:
    PIN.write_text(pin_with_new_names(PIN.read_text(encoding="utf-8")), encoding="utf-8")
    PAGE.write_text(regenerate(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stderr.write(f"{PAGE} regenerated; {PIN} holds {len(read_pin())} names\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
