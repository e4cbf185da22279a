"""One usage line for an adapter that cannot be loaded: which engine, from where, what went wrong, what to do.

Part of the suite.

An adapter is the author's code, imported by the suite; whatever its import
raises (an ``ImportError`` after an upgrade, a typo'd attribute, a syntax
error, an exception its module raises at import) is the author's to fix, so
it must reach them as one line they can act on — never pytest's INTERNALERROR
traceback through the plugin's frames. When the missing name was public in an
earlier release, the line names its replacement (``alkstore_contract._moved``'s
table, which CHANGELOG.md lists too): an adapter written against an older
alkstore is told how to port, not only that it broke.
"""

from __future__ import annotations

import re
import traceback
from types import ModuleType

from alkstore_contract._moved import replacement

_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>[\w.]+)' from '(?P<module>[\w.]+)'")


def missing_name(exc: BaseException) -> str | None:
    """The dotted name ``exc`` says is missing (``pkg.mod.Name`` or ``pkg.mod``), or ``None``."""
    if isinstance(exc, ImportError):
        found = _CANNOT_IMPORT.search(str(exc))
        if found is not None:
            return f"{found['module']}.{found['name']}"
        return exc.name if isinstance(exc, ModuleNotFoundError) else None
    if isinstance(exc, AttributeError) and isinstance(exc.obj, ModuleType) and exc.name:
        return f"{exc.obj.__name__}.{exc.name}"
    return None


def _where(exc: BaseException) -> str:
    """`` (at file:line)``: the innermost frame of the author's code (import machinery's frames are not theirs)."""
    if isinstance(exc, SyntaxError):
        return ""  # its message already names the file and the line
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if not frame.filename.startswith("<frozen")]
    if not frames:
        return ""
    return f" (at {frames[-1].filename}:{frames[-1].lineno})"


def load_failure(engine: str, source: str, exc: BaseException) -> str:
    """The one line: ``engine 'x' (source) cannot be loaded: Error: message (at file:line) — hint``."""
    message = " ".join(str(exc).split()) or "(no message)"
    line = f"engine {engine!r} ({source}) cannot be loaded: {type(exc).__name__}: {message}{_where(exc)}"
    missing = missing_name(exc)
    new = replacement(missing) if missing is not None else None
    if missing is not None and new is not None:
        line += f" — {missing} was public in an earlier alkstore release; use {new} instead (see CHANGELOG.md)"
    return line
