"""docs/wire-protocol.md and protocol.schema.json describe the same messages.

Rule: an author in another language writes an engine from the page, the
suite judges it by the schema; where they part, an engine can follow the page
and fail. So every request type, each of its fields, the job snapshot's
fields, the option objects' fields and the error classes on the page are the
schema's, and the reverse. If this fails, change the page and the schema
together (and, for a change an engine of this version could misread, the
protocol's version).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.types import JOB_FIELDS
from alkstore_contract.wire import PROTOCOL_VERSION, SCHEMA_PATH

DOC = Path(__file__).resolve().parents[1] / "docs" / "wire-protocol.md"
ROW = re.compile(r"^\| `(?P<type>[a-z_]+)` \|(?P<fields>[^|]*)\|(?P<result>[^|]*)\|$")
TICKED = re.compile(r"`([a-z_]+)`")


def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _sentence(text: str, opening: str) -> list[str]:
    start = text.index(opening) + len(opening)
    end = re.compile(r"\.(\s|$)").search(text, start)
    return TICKED.findall(text[start : end.start() if end else len(text)])


def doc_messages(text: str) -> dict[str, set[str]]:
    """The Messages table: each request type and the fields it lists besides ``id`` and ``type``."""
    rows = {}
    for line in _section(text, "Messages").splitlines():
        match = ROW.match(line)
        if match:
            rows[match["type"]] = set(TICKED.findall(match["fields"]))
    return rows


def schema_messages(schema: dict[str, Any]) -> dict[str, set[str]]:
    return {name: set(rule["properties"]) - {"id", "type"} for name, rule in schema["$defs"]["requests"].items()}


def test_the_messages_table_lists_every_request_and_its_fields_as_the_schema_does() -> None:
    """Messages: the same request types with the same fields, on the page and in the schema."""
    doc, schema = doc_messages(DOC.read_text(encoding="utf-8")), schema_messages(_schema())
    assert set(doc) == set(schema), (
        f"only on the page: {set(doc) - set(schema)}; only in the schema: {set(schema) - set(doc)}"
    )
    differing = {name: (doc[name], schema[name]) for name in doc if doc[name] != schema[name]}
    assert not differing, f"fields (page, schema) differ: {differing}"
    assert set(_schema()["$defs"]["results"]) == set(schema), "every request has a result in the schema"


def test_the_snapshot_and_the_option_objects_have_the_same_fields() -> None:
    """Encodings: the job snapshot's 17 fields (Job's, in order), queue options and enqueue options."""
    text, defs = DOC.read_text(encoding="utf-8"), _schema()["$defs"]
    snapshot = _sentence(text, "fields of `alkstore_contract.types.Job`")
    states = {"ready", "processing", "dead", "null"}
    assert [name for name in snapshot if name not in states] == list(JOB_FIELDS)
    assert list(defs["job"]["properties"]) == list(JOB_FIELDS)
    assert set(_sentence(text, "Queue options (`opts` of `queue`)")) == set(defs["queue_opts"]["properties"])
    enqueue = set(_sentence(text, "Enqueue options (`options` of `enqueue` and\n`enqueue_many`)"))
    assert enqueue - {"null"} == set(defs["enqueue_options"]["properties"])


def test_the_error_classes_are_the_same() -> None:
    """Errors: the classes of the page's table are the schema's enum."""
    section = _section(DOC.read_text(encoding="utf-8"), "Errors")
    on_page = re.findall(r"^\| `([A-Za-z]+)` \|", section, flags=re.MULTILINE)
    assert on_page == _schema()["$defs"]["error"]["properties"]["class"]["enum"]


def test_the_page_and_the_schema_name_the_suites_protocol_version() -> None:
    """Versions: the page's title, the schema's and the suite's constant say the same version."""
    assert DOC.read_text(encoding="utf-8").startswith(f"# The alkstore wire protocol, version {PROTOCOL_VERSION}\n")
    assert _schema()["x-protocol-version"] == PROTOCOL_VERSION


def test_a_field_missing_from_the_page_is_found() -> None:
    """The check itself can fail: a page whose table drops a field disagrees with the schema."""
    text = DOC.read_text(encoding="utf-8").replace(
        "| `claim_batch` | `queue`, `now`, `worker_id`, `n` |", "| `claim_batch` | `queue`, `now`, `worker_id` |"
    )
    with pytest.raises(AssertionError):
        assert doc_messages(text) == schema_messages(_schema())
