"""The API listings of docs/certify-reference.md, generated from the code.

``python -m tools.api_reference`` rewrites every block of that page between
``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->`` from the
classes themselves: the storage driver's methods, ``NewJobs`` and the kit's
helpers; the public surface's protocols; ``Job``'s fields. Signatures come
from ``inspect.signature`` (annotations as written in the source), fields from
``dataclasses.fields``, and each member's note is the first line of its
docstring. ``tests/test_docs.py`` fails when the page and the code drift, so
an outside author never reads a method the code no longer has.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alkstore_contract import kit, surface
from alkstore_contract.kit import driver
from alkstore_contract.types import Job

PAGE = Path(__file__).resolve().parents[1] / "docs" / "certify-reference.md"
BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated: \2 -->)", re.DOTALL)


def _first_line(obj: object) -> str:
    """The summary line of ``obj``'s own docstring (none inherited: ``object.__init__``'s says nothing here)."""
    doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc).splitlines()[0] if doc else ""


WIDTH = 110
"""A signature longer than this is written one parameter a line, as ruff formats it."""


def _signature(name: str, func: Callable[..., Any], indent: str) -> str:
    """``def name(params) -> ret``, annotations as the source spells them (the modules use PEP 563)."""
    signature = inspect.signature(func)
    params: list[str] = []
    keyword_only_marked = False
    for param in signature.parameters.values():
        if param.kind is param.KEYWORD_ONLY and not keyword_only_marked:
            params.append("*")
            keyword_only_marked = True
        text = param.name
        if param.annotation is not param.empty:
            text += f": {param.annotation}"
        if param.default is not param.empty:
            text += f" = {param.default!r}"
        params.append(text)
    returns = "" if signature.return_annotation is signature.empty else f" -> {signature.return_annotation}"
    prefix = f"{indent}{'async def' if inspect.iscoroutinefunction(func) else 'def'} {name}("
    one_line = f"{prefix}{', '.join(params)}){returns}:"
    if len(one_line) <= WIDTH:
        return one_line
    return "\n".join([prefix, *(f"{indent}    {param}," for param in params), f"{indent}){returns}:"])


def _documented(definition: str, obj: object, indent: str) -> str:
    """A definition with the first line of ``obj``'s docstring as its body (``...`` without one)."""
    note = _first_line(obj)
    return f'{definition}\n{indent}    """{note}"""' if note else f"{definition} ..."


def _member(cls: type, name: str) -> str:
    member = cls.__dict__[name]
    if isinstance(member, property):
        assert member.fget is not None
        returns = inspect.signature(member.fget).return_annotation
        return _documented(f"    @property\n    def {name}(self) -> {returns}:", member, "    ")
    return _documented(_signature(name, member, "    "), member, "    ")


def _public_members(cls: type) -> list[str]:
    """The members ``cls`` defines itself, in source order, without private names (``__aenter__`` kept)."""
    return [
        name
        for name, member in cls.__dict__.items()
        if (not name.startswith("_") or name in ("__aenter__", "__aexit__"))
        and (inspect.isfunction(member) or isinstance(member, property))
    ]


def _class_block(cls: type, bases: str, names: list[str] | None = None, fields: bool = False) -> str:
    lines = [f"class {cls.__name__}({bases}):" if bases else f"class {cls.__name__}:", f'    """{_first_line(cls)}"""']
    if fields:
        lines.append("")
        lines += [f"    {field.name}: {field.type}" for field in dataclasses.fields(cls)]
    for name in names if names is not None else _public_members(cls):
        lines += ["", _member(cls, name)]
    return "\n".join(lines)


def _python(*parts: str) -> str:
    return "```python\n" + "\n\n\n".join(parts) + "\n```\n"


def render_driver() -> str:
    """What a driver implements, what it is handed, how a store is opened on it, and the kit's helpers."""
    helpers = [
        _documented(_signature(name, getattr(driver, name), ""), getattr(driver, name), "")
        for name in (
            "int_job_id",
            "int_job_ids",
            "duration_us",
            "job_from_row",
            "jobs_from_rows",
            "c2_order_key",
            "claimable",
        )
    ]
    return _python(
        _class_block(kit.StorageDriver, "Protocol"),
        _class_block(kit.NewJobs, "", ["run_at_from", "expires_at_from"], fields=True),
        _class_block(kit.KitStore, "Generic[D]", ["__init__", "now"]),
        *helpers,
    )


def render_surface() -> str:
    """The certified surface, protocol by protocol."""
    return _python(*(_class_block(cls, "Protocol") for cls in (surface.Store, surface.Queue, surface.JobHandle)))


def render_job() -> str:
    """``Job``'s fields, in the order ``Job(...)`` takes them positionally (``JOB_FIELDS``)."""
    return _python(_class_block(Job, "", [], fields=True))


RENDERERS: dict[str, Callable[[], str]] = {"driver": render_driver, "surface": render_surface, "job": render_job}


def regenerate(text: str) -> str:
    """``text`` with every generated block rendered afresh; a block of an unknown name is an error."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in RENDERERS:
            raise KeyError(f"{PAGE.name}: no renderer for the generated block {name!r}")
        return f"{match.group(1)}{RENDERERS[name]()}{match.group(4)}"

    return BLOCK.sub(replace, text)


def generated_blocks(text: str) -> list[str]:
    """The names of the generated blocks of ``text``, in order."""
    return [match.group(2) for match in BLOCK.finditer(text)]


def main() -> int:
    text = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(regenerate(text), encoding="utf-8")
    sys.stderr.write(f"{PAGE}: {', '.join(generated_blocks(text))} regenerated\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
