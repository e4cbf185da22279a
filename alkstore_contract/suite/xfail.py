"""The expected-failure list of ``--alkstore-xfail-file``.

Part of the suite.

One entry a line: ``row[engine] CLAUSE reason`` (``test_row[engine]`` works
too); ``#`` starts a comment, so a reason cannot hold one. An entry covers a
violation or an engine exception of that clause in that row only: any other
failure of the row still fails the run. Entries are strict: a listed clause
that does not fail fails the run, and an entry that matches no collected row
is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from alkstore_contract.suite.clauses import CLAUSES


@dataclass(frozen=True, slots=True)
class XfailEntry:
    row_id: str
    """``row[engine]``."""
    clause: str
    reason: str
    line: int


def _normalise(row_id: str) -> str:
    return row_id.removeprefix("test_")


def load_xfail_file(path: Path) -> dict[str, list[XfailEntry]]:
    """Entries keyed by ``row[engine]``; a malformed line is a usage error naming the line and the rule."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--alkstore-xfail-file={path}: cannot read it: {exc}") from exc
    entries: dict[str, list[XfailEntry]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(maxsplit=2)
        row_id = parts[0]
        if len(parts) < 3 or "[" not in row_id or not row_id.endswith("]"):
            raise pytest.UsageError(
                f"--alkstore-xfail-file={path}, line {number}: {raw!r}: expected 'row[engine] CLAUSE reason'"
            )
        if parts[1] not in CLAUSES:
            raise pytest.UsageError(
                f"--alkstore-xfail-file={path}, line {number}: {parts[1]!r} is not a clause of docs/contract.md "
                f"(an entry is 'row[engine] CLAUSE reason'; clauses: {' '.join(CLAUSES)})"
            )
        key = _normalise(row_id)
        entries.setdefault(key, []).append(XfailEntry(key, parts[1], parts[2].strip(), number))
    return entries
