"""Read a report file for ``alkstore report``, or say in one line what is wrong with it.

Part of the report.

A matrix is rendered from files a user names, so a missing file, broken JSON
or JSON that is not a report must end in one line naming the file and the
fault, never in a traceback from deep inside the renderer. The shape is
checked against ``report.schema.json`` itself, the format the suite promises,
by a checker of the few JSON Schema keywords that schema uses: the runtime
dependencies stay pytest, hypothesis and aiosqlite (``jsonschema`` is only a
test dependency, and the tests hold this checker to its verdicts).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from alkstore_contract.report.build import SCHEMA_PATH

TOP = "the top level"
"""Where a fault sits when it is in the document itself; deeper ones read ``engines[0].rows[2].outcome``."""


class ReportFileError(Exception):
    """A report file that cannot be read or is not a report; the message is one line naming the file."""


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


def _has_type(value: object, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[name])


def _shown(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def schema_fault(value: object, rule: dict[str, Any], where: str = TOP) -> str | None:
    """The first place where ``value`` breaks ``rule`` (a JSON Schema), or None.

    Knows the keywords ``report.schema.json`` uses: type, const, enum, required,
    properties, additionalProperties (false), items, pattern and minimum;
    annotations (title, description, format) check nothing, as in JSON Schema.
    """
    types = rule.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_has_type(value, name) for name in names):
            return f"{where} is {_shown(value)}, not of type {' or '.join(names)}"
    if "const" in rule and (value != rule["const"] or isinstance(value, bool) != isinstance(rule["const"], bool)):
        return f"{where} is {_shown(value)}, not {_shown(rule['const'])}"
    if "enum" in rule and value not in rule["enum"]:
        return f"{where} is {_shown(value)}, not one of {', '.join(_shown(option) for option in rule['enum'])}"
    if isinstance(value, dict):
        missing = [key for key in rule.get("required", ()) if key not in value]
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            return f"{where} has no {', '.join(repr(key) for key in missing[:3])}{more}"
        properties: dict[str, Any] = rule.get("properties", {})
        if rule.get("additionalProperties") is False:
            unknown = [key for key in value if key not in properties]
            if unknown:
                return f"{where} has unknown key(s) {', '.join(repr(key) for key in unknown)}"
        for key, sub_rule in properties.items():
            if key in value:
                fault = schema_fault(value[key], sub_rule, key if where == TOP else f"{where}.{key}")
                if fault:
                    return fault
    if isinstance(value, list) and "items" in rule:
        for index, item in enumerate(value):
            fault = schema_fault(item, rule["items"], f"{where}[{index}]")
            if fault:
                return fault
    if isinstance(value, str) and "pattern" in rule and not re.search(rule["pattern"], value):
        return f"{where} is {_shown(value)}, which does not match {rule['pattern']}"
    if _has_type(value, "number") and "minimum" in rule and value < rule["minimum"]:
        return f"{where} is {value}, below the minimum {rule['minimum']}"
    return None


def read_report(path: Path) -> dict[str, Any]:
    """The report in ``path``; ReportFileError when it cannot be read, is not JSON, or is not a report."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReportFileError(f"{path}: a directory, not a report file") from None
    except UnicodeDecodeError:
        raise ReportFileError(f"{path}: not a JSON report (not UTF-8 text)") from None
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportFileError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    fault = schema_fault(data, schema())
    if fault:
        raise ReportFileError(
            f"{path}: not an alkstore report ({fault}; see alkstore_contract/report/report.schema.json)"
        )
    checked: dict[str, Any] = data
    return checked
