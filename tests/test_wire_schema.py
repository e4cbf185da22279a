"""Every message of a recorded certify session is valid under the protocol's JSON Schema (docs/wire-protocol.md).

Rule: the protocol's schema is the contract between the suite and an engine
in any language, so the messages the suite sends and the Node.js engine
answers in a real run must pass it, checked by ``jsonschema`` (a general
validator), and the suite's own small checker (``alkstore_contract.wire.
schema``, which judges engines at run time) must agree with it on those
messages and on broken ones. If this fails, check protocol.schema.json
against the messages alkstore_contract/wire/surface.py builds, and schema.py's
keywords against the ones the schema uses.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_contract.wire import SCHEMA_PATH
from alkstore_contract.wire.process import TRACE_ENV
from alkstore_contract.wire.schema import reply_fault, request_fault
from tests.suite_subprocess import run_pytest

REPO = Path(__file__).resolve().parents[1]
NODE_MANIFEST = REPO / "engines_under_test" / "alkstore_node" / "alkstore-engine.toml"
SESSION_ROWS = (
    "validation_and_closed_store",
    "lease_validity",
    "exactly_once",
    "batch_ack_and_cancel",
    "durability",
    "release",
    "unique_keys",
)
"""Rows whose messages cover every op of the surface (release, unique_keys: the Node engine declares them),
worker processes (exactly_once) and kill -9 (durability)."""

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_MANIFEST.parent / "node_modules" / "better-sqlite3").exists(),
    reason="needs node and the Node.js engine's npm packages (bash ci/node.sh install)",
)


@cache
def _validator(pointer: str) -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator({**schema, "$ref": pointer})


@cache
def recorded_session(scratch: str) -> list[dict[str, Any]]:
    trace = Path(scratch) / "trace.jsonl"
    done = run_pytest(
        Path(scratch),
        {**os.environ, TRACE_ENV: str(trace)},
        "-q",
        "-c",
        os.devnull,
        "--rootdir",
        scratch,
        f"--alkstore-engine={NODE_MANIFEST}",
        "-k",
        " or ".join(SESSION_ROWS),
        scratch,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return recorded_session(str(tmp_path_factory.mktemp("wire-session")))


def test_every_message_of_a_certify_session_is_valid_under_the_schema(session: list[dict[str, Any]]) -> None:
    """Every request against #/$defs/request, every reply against #/$defs/reply and its op's result."""
    requests = _validator("#/$defs/request")
    replies = _validator("#/$defs/reply")
    sent: dict[tuple[int, int], str] = {}
    ops: set[str] = set()
    for record in session:
        message, pid = record["message"], record["pid"]
        if record["direction"] == "sent":
            requests.validate(message)
            assert request_fault(message) is None, message
            sent[(pid, message["id"])] = message["type"]
            ops.add(message["type"])
            continue
        replies.validate(message)
        op = sent[(pid, message["in_reply_to"])]
        if message["type"] == "ok":
            _validator(f"#/$defs/results/{op}").validate(message["result"])
        assert reply_fault(message, op) is None, (op, message)
    pids = {record["pid"] for record in session}
    assert len(pids) > 2, "the session has engine processes of worker processes too"
    missing = set(_validator("#/$defs/request").schema["$defs"]["requests"]) - ops
    networked_only = {"server_address", "location_via", "create_crashable_location", "crash_server", "restart_server"}
    assert missing <= networked_only, f"ops the session never sent: {missing}"


BROKEN_REPLIES: tuple[tuple[str, object], ...] = (
    ("claim_one", {"in_reply_to": 1, "type": "ok", "result": {"handle": 7}}),
    ("claim_one", {"in_reply_to": 1, "type": "ok"}),
    ("enqueue", {"in_reply_to": 1, "type": "ok", "result": 1.5}),
    ("get_job", {"in_reply_to": 1, "type": "ok", "result": {"id": 1}}),
    ("ack", {"in_reply_to": 1, "type": "ok", "result": 1}),
    ("ack", {"in_reply_to": 1, "type": "error", "error": {"class": "Oops", "message": "m"}}),
    ("ack", {"in_reply_to": 1, "type": "error", "error": {"class": "HandleSpent"}}),
    ("ack", {"in_reply_to": "1", "type": "ok", "result": True}),
    ("ack", {"in_reply_to": 1, "type": "ok", "result": True, "extra": 1}),
    ("hello", {"in_reply_to": 0, "type": "ok", "result": {"version": 1}}),
    ("count_stored_jobs", {"in_reply_to": 1, "type": "ok", "result": -1}),
    ("ack", []),
)


@pytest.mark.parametrize(("op", "message"), BROKEN_REPLIES)
def test_the_suites_checker_rejects_what_jsonschema_rejects(op: str, message: object) -> None:
    """The run-time checker and jsonschema agree on broken replies: both reject each."""
    reply = _validator("#/$defs/reply")
    errors = list(reply.iter_errors(message))
    if not errors and isinstance(message, dict) and message.get("type") == "ok":
        errors = list(_validator(f"#/$defs/results/{op}").iter_errors(message["result"]))
    assert errors, f"jsonschema accepts {message}"
    assert reply_fault(message, op) is not None, f"the suite's checker accepts {message}"
