"""Module paths from before the suite and the report became parts of their own, kept importing for one release.

Until release 0.2 the suite's machinery and the report sat beside the contract
in one flat package (``alkstore_contract.plugin``, ``alkstore_contract.rows``,
``alkstore_contract.report``, …). They now live in ``alkstore_contract.suite``
and ``alkstore_contract.report``. An import of an old path still works for one
minor release: a finder on ``sys.meta_path`` answers it with the module at its
new path (the same module object, so a patch through either name reaches both)
and raises a ``DeprecationWarning`` naming the new path. No file is left at an
old path, so the tree shows only the parts.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType

_SUITE_MODULES = (
    "checks",
    "clauses",
    "engine_options",
    "expected",
    "harness",
    "history",
    "ledger",
    "model",
    "plugin",
    "processes",
    "registry",
    "run",
    "settings",
    "tick",
    "verdicts",
    "worker",
    "xfail",
)
MOVED: dict[str, str] = {
    **{f"alkstore_contract.{name}": f"alkstore_contract.suite.{name}" for name in _SUITE_MODULES},
    "alkstore_contract.faults": "alkstore_contract.suite.fault_proxy",
    "alkstore_contract.rows": "alkstore_contract.suite.rows",
    "alkstore_contract.report_file": "alkstore_contract.report.read",
    "alkstore_contract.render": "alkstore_contract.report.render",
    "alkstore_contract.cli": "alkstore_cli.main",
    "alkstore_contract.report.cli": "alkstore_cli.main",
}
"""Old module path → new one. A package's submodules follow it (``alkstore_contract.rows.claim_order``).

Three old paths are not here because their name now means something else: ``alkstore_contract.suite``
(the old row registry, now ``alkstore_contract.suite.row``), ``alkstore_contract.report`` (the old
report builder, now ``alkstore_contract.report.build``) and ``alkstore_contract.wire`` (the network-fault
rows' helper, now ``alkstore_contract.suite.network``). CHANGELOG.md lists them.
"""
REMOVED_IN = "0.3"

REPLACED: dict[str, str] = {
    "alkstore_contract.resolution.NewJob": "alkstore_contract.resolution.NewJobs",
    "alkstore_contract.resolution.resolve_new_job": "alkstore_contract.resolution.resolve_new_jobs",
    "alkstore_contract.resolution.RetryOutcome": "alkstore_contract.resolution.RetryDecision",
    "alkstore_contract.resolution.resolve_retry": "alkstore_contract.resolution.decide_retry",
    "alkstore_contract.wire": "alkstore_contract.suite.network",
    **{
        f"alkstore_contract.wire.{name}": f"alkstore_contract.suite.network.{name}"
        for name in ("open_wire", "Wire", "Outcome", "networked_adapter", "SLACK_S", "CLOSE_WAIT_S")
    },
}
"""Names public in an earlier release that no longer import as they did → what to use instead.

The four resolution helpers of 0.1 still import for one release, as shims
(``alkstore_contract._pre_kit``); ``alkstore_contract.wire`` cannot keep its old
meaning (the name is the wire protocol's now). An adapter that fails to load on one of
these is told its replacement in the same line (``alkstore_contract.suite.load_errors``);
CHANGELOG.md names each, and ``tests/test_changelog.py`` holds the two to each other.
"""


def replacement(name: str) -> str | None:
    """What replaces ``name`` (a module, or a module's attribute), public in an earlier release; ``None``: nothing."""
    return REPLACED.get(name) or new_path(name)


def new_path(old: str) -> str | None:
    """Where the module once imported as ``old`` lives now, or ``None`` when it did not move."""
    for prefix, target in MOVED.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix) :]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old path as the module at its new path, with the warning."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.target}: import it from there "
            f"(the old path stops working in alkstore {REMOVED_IN}; see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,  # past create_module: warnings skips importlib's own frames
        )
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: ``create_module`` returned the module at its new path, already executed."""


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Answers the old paths in ``MOVED``; every other import goes on to the usual finders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        target_name = new_path(fullname)
        if target_name is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(target_name))


NAMES_MOVED: dict[str, tuple[str, tuple[str, ...]]] = {
    "alkstore_contract.validation": ("alkstore_contract.types", ("Duration", "JobId")),
}
"""A module → where some of its old names live now, and which: served from the old module with the warning."""
SHIMS: dict[str, str] = {"alkstore_contract.resolution": "alkstore_contract._pre_kit"}
"""A module → the module of shims that serves its ``REPLACED`` names with the warning."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once, and the old names' ``__getattr__`` on their modules.

    Importing ``alkstore_contract`` calls this. The ``__getattr__`` of a module whose old
    names are served (``NAMES_MOVED``, ``SHIMS``) is set from here rather than written in
    the module, so a module never imports the shims that serve its own old names: the
    shims import the module, never the other way round.
    """
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())  # first: the path finder would load a second copy of a submodule
    for name, (target, names) in NAMES_MOVED.items():
        vars(importlib.import_module(name)).setdefault("__getattr__", moved_names(name, target, names))
    for name, shims in SHIMS.items():
        vars(importlib.import_module(name)).setdefault("__getattr__", replaced_names(name, shims))


def replaced_names(module: str, shims: str) -> Callable[[str], object]:
    """A ``__getattr__`` for ``module`` that hands out its ``REPLACED`` names from ``shims``, with the warning.

    The names an earlier release made public and this one replaced (the 0.1 resolution helpers):
    each is a shim over its replacement, so an adapter written against the old release still loads.
    """

    def __getattr__(name: str) -> object:
        instead = REPLACED.get(f"{module}.{name}")
        served = importlib.import_module(shims)
        if instead is None or not hasattr(served, name):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated: use {instead} "
            f"(the old name stops working in alkstore {REMOVED_IN}; see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        value: object = getattr(served, name)
        setattr(sys.modules[module], name, value)  # once: ``from … import`` looks a name up twice
        return value

    return __getattr__


def moved_names(package: str, module: str, names: tuple[str, ...]) -> Callable[[str], object]:
    """A ``__getattr__`` for ``package`` that hands out ``names`` from ``module``, with the warning.

    For the two old modules whose path is now a package's (``alkstore_contract.suite``,
    ``alkstore_contract.report``): ``from alkstore_contract.report import build_report`` keeps working.
    """

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"{package}.{name} moved to {module}.{name}: import it from there "
            f"(the old path stops working in alkstore {REMOVED_IN}; see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # once: ``from … import`` looks a name up twice
        return value

    return __getattr__
