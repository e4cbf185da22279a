"""Finding engine adapters: installed ``alkstore.engines`` entry points, ``module:attr``, or a manifest.

Part of the suite.

The ``module:attr`` form lets an engine author certify an engine before it is
packaged, and lets the project's own tests point the suite at broken-engine
mutants that are deliberately not registered. A path ending ``.toml`` names an
engine in any language by its manifest (``alkstore_contract.wire``).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from alkstore_contract.adapter import EngineAdapter
from alkstore_contract.suite.load_errors import load_failure
from alkstore_contract.wire.adapter import load_wire_adapter
from alkstore_contract.wire.manifest import ManifestError, is_manifest_spec

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
    try:
        missing = [member for member in ADAPTER_MEMBERS if not hasattr(obj, member)]
        if not missing and isinstance(obj, EngineAdapter):
            return obj
    except Exception as exc:  # a member the adapter computes raised while the check read it
        raise UnknownEngine(load_failure(spec, "reading its adapter's members", exc)) from exc
    raise UnknownEngine(
        f"engine {spec!r}: {obj!r} does not implement alkstore_contract.adapter.EngineAdapter: "
        f"it lacks {', '.join(missing) or 'nothing by name, but a member has the wrong kind'} "
        "(see docs/certify-your-engine.md)"
    )


def load_adapter(spec: str) -> EngineAdapter:
    """The adapter named ``spec``: a manifest (``….toml``), an entry-point name, or ``package.module:attribute``.

    Whatever stops it loading is an ``UnknownEngine`` whose message is one line (``load_errors``).
    """
    if is_manifest_spec(spec):
        try:
            return load_wire_adapter(spec)
        except ManifestError as exc:
            raise UnknownEngine(str(exc)) from None
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            adapter = getattr(importlib.import_module(module_name), attr)
        except Exception as exc:  # the author's code: whatever its import raises is theirs to fix
            raise UnknownEngine(load_failure(spec, "module:attr", exc)) from exc
        return _checked(spec, adapter)
    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
    if not matches:
        installed = ", ".join(installed_engine_names()) or "none"
        raise UnknownEngine(
            f"unknown engine {spec!r}: no {ENTRY_POINT_GROUP} entry point of that name; "
            f"installed engines: {installed} (or give an adapter as 'package.module:attribute')"
        )
    try:
        adapter = matches[0].load()
    except Exception as exc:
        raise UnknownEngine(load_failure(spec, f"entry point {ENTRY_POINT_GROUP}: {matches[0].value}", exc)) from exc
    return _checked(spec, adapter)
