"""Checking each message an engine sends against ``protocol.schema.json``, in one line when it fails.

The runtime dependencies stay pytest, hypothesis and aiosqlite, so this is a
checker of the JSON Schema keywords the protocol's schema uses (``jsonschema``
is a test dependency; ``tests/test_wire_schema.py`` holds this checker to its
verdicts on recorded messages). It is also faster than a general validator on
the few hundred bytes of a message, which matters on every reply.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from alkstore_contract.wire import SCHEMA_PATH

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
}


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _has_type(value: object, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _shown(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def resolve(pointer: str) -> dict[str, Any]:
    """The rule at ``#/$defs/...`` in the protocol's schema."""
    node: Any = schema()
    for part in pointer.removeprefix("#/").split("/"):
        node = node[part]
    rule: dict[str, Any] = node
    return rule


def fault(value: object, rule: dict[str, Any], where: str) -> str | None:
    """The first place where ``value`` breaks ``rule``, or None.

    Knows the keywords the protocol's schema uses: $ref, anyOf, type, const,
    enum, required, properties, additionalProperties (false), items, minItems,
    uniqueItems, pattern, minLength, minimum, maximum, exclusiveMinimum;
    annotations (description) check nothing.
    """
    if "$ref" in rule:
        found = fault(value, resolve(rule["$ref"]), where)
        if found:
            return found
    if "anyOf" in rule:
        faults = [fault(value, option, where) for option in rule["anyOf"]]
        if all(faults):
            closest = min((f for f in faults if f), key=lambda f: (f.count("."), -len(f)))
            return closest if len(faults) <= 2 else f"{where} is {_shown(value)}, which is none of the forms allowed"
    types = rule.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_has_type(value, name) for name in names):
            return f"{where} is {_shown(value)}, not of type {' or '.join(names)}"
    if "const" in rule and (value != rule["const"] or isinstance(value, bool) != isinstance(rule["const"], bool)):
        return f"{where} is {_shown(value)}, not {_shown(rule['const'])}"
    if "enum" in rule and not any(value == o and type(value) is type(o) for o in rule["enum"]):
        return f"{where} is {_shown(value)}, not one of {', '.join(_shown(option) for option in rule['enum'])}"
    if isinstance(value, dict):
        return _object_fault(value, rule, where)
    if isinstance(value, list):
        return _array_fault(value, rule, where)
    if isinstance(value, str):
        if len(value) < rule.get("minLength", 0):
            return f"{where} is {_shown(value)}, shorter than {rule['minLength']}"
        if "pattern" in rule and not _pattern(rule["pattern"]).search(value):
            return f"{where} is {_shown(value)}, which does not match {rule['pattern']}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in rule and value < rule["minimum"]:
            return f"{where} is {_shown(value)}, below {rule['minimum']}"
        if "maximum" in rule and value > rule["maximum"]:
            return f"{where} is {_shown(value)}, above {rule['maximum']}"
        if "exclusiveMinimum" in rule and value <= rule["exclusiveMinimum"]:
            return f"{where} is {_shown(value)}, not above {rule['exclusiveMinimum']}"
    return None


def _object_fault(value: dict[str, Any], rule: dict[str, Any], where: str) -> str | None:
    missing = [key for key in rule.get("required", ()) if key not in value]
    if missing:
        return f"{where} has no {', '.join(repr(key) for key in missing)}"
    properties: dict[str, Any] = rule.get("properties", {})
    if rule.get("additionalProperties") is False:
        extra = [key for key in value if key not in properties]
        if extra:
            return f"{where} has a field the protocol does not know: {extra[0]!r}"
    for key, sub in properties.items():
        if key in value:
            found = fault(value[key], sub, f"{where}.{key}")
            if found:
                return found
    return None


def _array_fault(value: list[Any], rule: dict[str, Any], where: str) -> str | None:
    if len(value) < rule.get("minItems", 0):
        return f"{where} has {len(value)} items, fewer than {rule['minItems']}"
    if rule.get("uniqueItems") and len({json.dumps(item, sort_keys=True) for item in value}) != len(value):
        return f"{where} lists an item twice"
    items = rule.get("items")
    if items is not None:
        for index, item in enumerate(value):
            found = fault(item, items, f"{where}[{index}]")
            if found:
                return found
    return None


def reply_fault(message: object, op: str) -> str | None:
    """What is wrong with ``message`` as the engine's reply to a request of type ``op``, or None."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in ("ok", "error"):
        return fault(message, resolve("#/$defs/reply"), "the reply")
    found = fault(message, resolve(f"#/$defs/reply_{kind}"), "the reply")
    if found or kind == "error":
        return found
    assert isinstance(message, dict)
    return fault(message["result"], resolve(f"#/$defs/results/{op}"), f"the result of {op}")


def request_fault(message: object) -> str | None:
    """What is wrong with ``message`` as a request of the suite (the suite's own messages are checked in tests)."""
    if not isinstance(message, dict) or message.get("type") not in resolve("#/$defs/requests"):
        return f"the request's type {_shown(message.get('type') if isinstance(message, dict) else message)} is unknown"
    return fault(message, resolve(f"#/$defs/requests/{message['type']}"), "the request")
