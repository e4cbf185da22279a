"""The expected-failure list of ``--alkstore-xfail-file``.

One entry a line: ``row[engine] reason`` (``test_row[engine]`` works too);
``#`` starts a comment. Entries are strict: a listed row that passes fails the
run, and an entry that matches no collected row is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True, slots=True)
class XfailEntry:
    row_id: str
    reason: str
    line: int


def _normalise(row_id: str) -> str:
    return row_id.removeprefix("test_")


def load_xfail_file(path: Path) -> dict[str, XfailEntry]:
    """Entries keyed by ``row[engine]``; a malformed line is a usage error naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--alkstore-xfail-file={path}: cannot read it: {exc}") from exc
    entries: dict[str, XfailEntry] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        row_id, _, reason = line.partition(" ")
        if "[" not in row_id or not row_id.endswith("]") or not reason.strip():
            raise pytest.UsageError(
                f"--alkstore-xfail-file={path}, line {number}: {raw!r}: expected 'row[engine] reason'"
            )
        entries[_normalise(row_id)] = XfailEntry(_normalise(row_id), reason.strip(), number)
    return entries
