"""The protocol's operations, read from their one table: the requests of ``protocol.schema.json``.

Part of the wire.

A new op is written there first, its request under ``$defs/requests`` and its
result under ``$defs/results``. Everything else that knows the ops is checked
against that table rather than kept beside it: the suite's Python side and
docs/wire-protocol.md (tests/test_wire_ops.py, tests/test_wire_protocol_doc.py),
the Node kit's front and the Node engine (their ``node --test``) and the Rust
engine (``cargo test``). So an op added to the table is refused by a test until
each of them serves or documents it.

An op marked ``x-only-with`` is served only by an engine whose handshake
declares it: a capability (``networked``), or a member of the handshake's
``networked`` object (``networked.server_crash_hook``). Every other op is
served by every engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from alkstore_contract.wire import SCHEMA_PATH

ENVELOPE = frozenset({"id", "type"})
"""The fields every request carries, which the table's rows do not list as the op's own."""


@dataclass(frozen=True)
class WireOp:
    """One row of the table: a request type, its own fields, and who must serve it."""

    name: str
    fields: tuple[str, ...]
    """Its fields besides ``id`` and ``type``, in the schema's order."""
    required: frozenset[str]
    """Those of ``fields`` every request of this type carries."""
    only_with: str | None
    """What the handshake declares when an engine serves it; None: every engine does."""


def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@cache
def wire_ops() -> dict[str, WireOp]:
    """Every op of the protocol, by request type, in the table's order."""
    return {
        name: WireOp(
            name=name,
            fields=tuple(field for field in rule["properties"] if field not in ENVELOPE),
            required=frozenset(rule["required"]) - ENVELOPE,
            only_with=rule.get("x-only-with"),
        )
        for name, rule in _schema()["$defs"]["requests"].items()
    }


def core_ops() -> frozenset[str]:
    """The ops every engine serves, whatever it declares."""
    return frozenset(name for name, op in wire_ops().items() if op.only_with is None)
