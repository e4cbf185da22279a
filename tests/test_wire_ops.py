"""The wire's one table of operations (protocol.schema.json's requests) and what is checked against it.

Rule: an op of the protocol is written once, in the schema; the suite's
Python side sends exactly the table's ops, the codec writes the option objects
with the table's fields, and docs/wire-protocol.md says which ops only some
engines serve as the table marks them (its Messages table lists each op's
fields: tests/test_wire_protocol_doc.py). The engines hold themselves to the
same table in their own tests (node --test, cargo test). If this fails after
adding an op to the schema: send it from alkstore_contract/wire, document it,
and serve it in every engine.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from alkstore_contract.types import EnqueueCall, QueueOpts
from alkstore_contract.wire import SCHEMA_PATH, codec
from alkstore_contract.wire.ops import core_ops, wire_ops

WIRE = Path(codec.__file__).parent
DOC = Path(__file__).resolve().parents[1] / "docs" / "wire-protocol.md"
SENDERS = frozenset({"request", "request_sync", "_ask"})
"""The calls through which alkstore_contract/wire sends a request, the op's type their first argument."""
ROW = re.compile(r"^\| `(?P<type>[a-z_]+)` \|[^|]*\|(?P<result>[^|]*)\|$")


def _defs() -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    return defs


def ops_sent_by_the_python_side() -> set[str]:
    """Every request type alkstore_contract/wire's modules name as the op of a call that sends one."""
    sent = set()
    for module in sorted(WIRE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            first = node.args[0]
            if called in SENDERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                sent.add(first.value)
    return sent


def test_the_table_is_whole() -> None:
    """Each request has a result and a place in #/$defs/request; each x-only-with names what hello can declare."""
    defs = _defs()
    ops = wire_ops()
    assert set(defs["results"]) == set(ops), "every request of the table has a result, and no other"
    listed = [option["$ref"].removeprefix("#/$defs/requests/") for option in defs["request"]["anyOf"]]
    assert listed == list(ops), "#/$defs/request lists the table's requests, in its order"
    hello = defs["results"]["hello"]["properties"]
    declarable = set(hello["capabilities"]["items"]["enum"])
    declarable |= {f"networked.{member}" for member in hello["networked"]["properties"]}
    assert {op.only_with for op in ops.values()} - {None} <= declarable
    assert {"hello", "enqueue", "ack", "heartbeat"} <= core_ops() < set(ops)


def test_the_python_side_sends_every_op_of_the_table_and_no_other() -> None:
    sent = ops_sent_by_the_python_side()
    assert sent == set(wire_ops()), (
        f"in the table but never sent: {set(wire_ops()) - sent}; sent but not in the table: {sent - set(wire_ops())}"
    )


def test_the_codec_writes_the_option_objects_with_the_tables_fields() -> None:
    defs = _defs()
    options = codec.enqueue_options(EnqueueCall())
    assert set(options) == set(defs["enqueue_options"]["properties"])
    assert set(codec.queue_opts(QueueOpts())) == set(defs["queue_opts"]["properties"])
    assert {"options"} <= set(wire_ops()["enqueue"].fields) & set(wire_ops()["enqueue_many"].fields)
    assert "opts" in wire_ops()["queue"].fields


def test_the_page_says_which_ops_only_some_engines_serve_as_the_table_marks_them() -> None:
    """A Messages row says "only" (and what, e.g. "networked only") exactly for an op marked x-only-with."""
    results = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            results[match["type"]] = match["result"]
    assert set(results) == set(wire_ops()), "the page's Messages table has a row per op of the table"
    for name, op in wire_ops().items():
        marked = op.only_with.rsplit(".", 1)[-1] if op.only_with else None
        assert ("only" in results[name]) == (marked is not None), f"{name}: {results[name]!r} vs x-only-with"
        assert marked is None or marked in results[name], f"{name}: the page does not say it needs {marked}"
