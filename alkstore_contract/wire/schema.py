"""Checking each message an engine sends against ``protocol.schema.json``, in one line when it fails.

Part of the wire.

The runtime dependencies stay pytest, hypothesis and aiosqlite, so this is a
checker of the JSON Schema keywords the protocol's schema uses (``jsonschema``
is a test dependency; ``tests/test_wire_schema.py`` holds this checker to its
verdicts on recorded messages). It is also faster than a general validator on
the few hundred bytes of a message, which matters on every reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from alkstore_contract.wire import SCHEMA_PATH


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


Check = Callable[[object, str], "str | None"]
"""A compiled rule: the first fault of a value (named by the ``where`` given), or None."""


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


@cache
def compiled(pointer: str) -> Check:
    """The rule at ``pointer``, compiled once: each reply is checked by closures, not by reading the schema."""
    return _compile(resolve(pointer))


def _type_check(types: str | list[str]) -> Check:
    names = frozenset([types] if isinstance(types, str) else types)
    number, integer = "number" in names, "integer" in names
    plain = {str: "string" in names, dict: "object" in names, list: "array" in names, type(None): "null" in names}
    wanted = " or ".join(sorted(names))

    def check(value: object, where: str) -> str | None:
        kind = type(value)
        if kind is bool:
            ok = "boolean" in names
        elif kind is int:
            ok = number or integer
        elif kind is float:
            ok = number or (integer and value.is_integer())  # type: ignore[attr-defined]
        else:
            ok = plain.get(kind, False)
        return None if ok else f"{where} is {_shown(value)}, not of type {wanted}"

    return check


def _value_check(rule: dict[str, Any]) -> Check | None:
    if "const" in rule:
        const = rule["const"]
        shown = _shown(const)
        return lambda value, where: (
            None if value == const and type(value) is type(const) else f"{where} is {_shown(value)}, not {shown}"
        )
    if "enum" in rule:
        options = rule["enum"]
        listed = ", ".join(_shown(option) for option in options)
        return lambda value, where: (
            None
            if any(value == option and type(value) is type(option) for option in options)
            else f"{where} is {_shown(value)}, not one of {listed}"
        )
    return None


def _object_check(rule: dict[str, Any]) -> Check:
    properties = {key: _compile(sub) for key, sub in rule.get("properties", {}).items()}
    required = tuple(rule.get("required", ()))
    closed = rule.get("additionalProperties") is False

    def check(value: object, where: str) -> str | None:
        if not isinstance(value, dict):
            return None
        missing = [key for key in required if key not in value]
        if missing:
            return f"{where} has no {', '.join(repr(key) for key in missing)}"
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                if closed:
                    return f"{where} has a field the protocol does not know: {key!r}"
                continue
            found = sub(item, f"{where}.{key}")
            if found:
                return found
        return None

    return check


def _array_check(rule: dict[str, Any]) -> Check:
    items = _compile(rule["items"]) if "items" in rule else None
    least, unique = rule.get("minItems", 0), rule.get("uniqueItems", False)

    def check(value: object, where: str) -> str | None:
        if not isinstance(value, list):
            return None
        if len(value) < least:
            return f"{where} has {len(value)} items, fewer than {least}"
        if unique and len({json.dumps(item, sort_keys=True) for item in value}) != len(value):
            return f"{where} lists an item twice"
        if items is not None:
            for index, item in enumerate(value):
                found = items(item, f"{where}[{index}]")
                if found:
                    return found
        return None

    return check


def _scalar_check(rule: dict[str, Any]) -> Check | None:
    shortest, pattern = rule.get("minLength", 0), rule.get("pattern")
    matcher = re.compile(pattern).search if pattern is not None else None
    low, high, above = rule.get("minimum"), rule.get("maximum"), rule.get("exclusiveMinimum")
    if not shortest and matcher is None and low is None and high is None and above is None:
        return None

    def check(value: object, where: str) -> str | None:
        if isinstance(value, str):
            if len(value) < shortest:
                return f"{where} is {_shown(value)}, shorter than {shortest}"
            if matcher is not None and not matcher(value):
                return f"{where} is {_shown(value)}, which does not match {pattern}"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if low is not None and value < low:
                return f"{where} is {_shown(value)}, below {low}"
            if high is not None and value > high:
                return f"{where} is {_shown(value)}, above {high}"
            if above is not None and value <= above:
                return f"{where} is {_shown(value)}, not above {above}"
        return None

    return check


def _ref(pointer: str) -> Check:
    """``$ref``, compiled when first used (a rule may refer to itself through others)."""
    target: list[Check] = []

    def check(value: object, where: str) -> str | None:
        if not target:
            target.append(compiled(pointer))
        return target[0](value, where)

    return check


def _closest(fault: str) -> tuple[int, bool]:
    """Of the faults of an ``anyOf``'s options, the deepest, else the one of the option whose type matched."""
    where = re.split(r" (?:is|has|lists) ", fault, maxsplit=1)[0]
    return (len(where), ", not of type " not in fault)


def _any_of(options: list[Check]) -> Check:
    def check(value: object, where: str) -> str | None:
        faults = []
        for option in options:
            found = option(value, where)
            if found is None:
                return None
            faults.append(found)
        if len(faults) <= 2:
            return max(faults, key=_closest)
        return f"{where} is {_shown(value)}, which is none of the forms allowed"

    return check


def _compile(rule: dict[str, Any]) -> Check:
    """One rule as a closure. Knows the keywords the protocol's schema uses: $ref, anyOf, type, const, enum,
    required, properties, additionalProperties (false), items, minItems, uniqueItems, pattern, minLength,
    minimum, maximum, exclusiveMinimum; annotations (description) check nothing."""
    checks: list[Check] = []
    if "$ref" in rule:
        checks.append(_ref(rule["$ref"]))
    if "anyOf" in rule:
        checks.append(_any_of([_compile(option) for option in rule["anyOf"]]))
    if "type" in rule:
        checks.append(_type_check(rule["type"]))
    for make in (_value_check, _scalar_check):
        made = make(rule)
        if made is not None:
            checks.append(made)
    if "properties" in rule or "required" in rule:
        checks.append(_object_check(rule))
    if "items" in rule or "minItems" in rule:
        checks.append(_array_check(rule))
    if len(checks) == 1:
        return checks[0]

    def check(value: object, where: str) -> str | None:
        for one in checks:
            found = one(value, where)
            if found:
                return found
        return None

    return check


def reply_fault(message: object, op: str) -> str | None:
    """What is wrong with ``message`` as the engine's reply to a request of type ``op``, or None."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in ("ok", "error"):
        return compiled("#/$defs/reply")(message, "the reply")
    found = compiled(f"#/$defs/reply_{kind}")(message, "the reply")
    if found or kind == "error":
        return found
    assert isinstance(message, dict)
    return compiled(f"#/$defs/results/{op}")(message["result"], f"the result of {op}")


def request_fault(message: object) -> str | None:
    """What is wrong with ``message`` as a request of the suite (the suite's own messages are checked in tests)."""
    if not isinstance(message, dict) or message.get("type") not in resolve("#/$defs/requests"):
        return f"the request's type {_shown(message.get('type') if isinstance(message, dict) else message)} is unknown"
    return compiled(f"#/$defs/requests/{message['type']}")(message, "the request")
