"""Finding engine adapters: installed ``alkstore.engines`` entry points, or ``module:attr``.

The ``module:attr`` form lets an engine author certify an engine before it is
packaged, and lets the project's own tests point the suite at broken-engine
mutants that are deliberately not registered.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from alkstore_contract.adapter import EngineAdapter

ENTRY_POINT_GROUP = "alkstore.engines"


class UnknownEngine(LookupError):
    """No installed engine and no importable adapter answers to the name."""


def installed_engine_names() -> list[str]:
    """Names of every engine registered through the ``alkstore.engines`` entry point."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


ADAPTER_MEMBERS = (
    "name",
    "version",
    "capabilities",
    "unavailable_reason",
    "create_location",
    "open_store",
    "count_stored_jobs",
    "drop_location",
)
"""What ``EngineAdapter`` asks of an adapter, in the order docs/certify-your-engine.md lists it."""


def _checked(spec: str, obj: object) -> EngineAdapter:
    missing = [member for member in ADAPTER_MEMBERS if not hasattr(obj, member)]
    if missing or not isinstance(obj, EngineAdapter):
        raise UnknownEngine(
            f"engine {spec!r}: {obj!r} does not implement alkstore_contract.adapter.EngineAdapter: "
            f"it lacks {', '.join(missing) or 'nothing by name, but a member has the wrong kind'} "
            "(see docs/certify-your-engine.md)"
        )
    return obj


def load_adapter(spec: str) -> EngineAdapter:
    """The adapter named ``spec``: an entry-point name, or ``package.module:attribute``."""
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
            return _checked(spec, getattr(module, attr))
        except (ImportError, AttributeError) as exc:
            raise UnknownEngine(f"engine {spec!r} could not be imported: {exc}") from exc
    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
    if not matches:
        installed = ", ".join(installed_engine_names()) or "none"
        raise UnknownEngine(
            f"unknown engine {spec!r}; installed engines: {installed} "
            f"(or give an adapter as 'package.module:attribute')"
        )
    return _checked(spec, matches[0].load())
