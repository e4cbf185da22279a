"""The script a ``model_based`` failure prints: the program so far, runnable against the public API.

Part of the suite.

Each op of a program adds its statement here as it runs, with the model's
answer as an assert; a failure renders them into an ``async def main()`` that
opens the same engine with the same seed and clock, so the reader can run the
program and watch it part from the model at the last line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.types import JobState


def src(value: object) -> str:
    """``value`` as Python source for the reproduction script."""
    if isinstance(value, datetime):
        return f"datetime.fromisoformat({value.isoformat()!r})"
    if isinstance(value, timedelta):
        return f"timedelta(microseconds={value // timedelta(microseconds=1)})"
    if isinstance(value, JobState):
        return f"JobState.{value.name}"
    return repr(value)


def call_src(args: Sequence[str], kwargs: dict[str, Any]) -> str:
    """The argument list of a call: ``args`` already as source, then ``kwargs`` rendered by ``src``."""
    return ", ".join([*args, *(f"{key}={src(value)}" for key, value in kwargs.items())])


@dataclass
class Script:
    """The program so far, as statements of an ``async def main()`` against the public API."""

    engine_spec: str
    seed: int
    start: datetime
    lines: list[str]

    def add(self, line: str) -> None:
        self.lines.append(line)

    def render(self, failure: str) -> str:
        body = "\n".join(f"        {line}" for line in self.lines)
        comment = "\n".join(f"        #   {line}" for line in failure.splitlines())
        return (
            "import asyncio\n"
            "from datetime import datetime, timedelta\n\n"
            "from alkstore_contract.clock import ManualClock\n"
            "from alkstore_contract.errors import HandleSpent\n"
            "from alkstore_contract.suite.registry import load_adapter\n"
            "from alkstore_contract.types import Enqueued, Job, JobState, QueueOpts\n\n\n"
            "async def spent(op):\n"
            '    """H4: an op on a spent handle raises HandleSpent."""\n'
            "    try:\n"
            "        await op\n"
            "    except HandleSpent:\n"
            "        return\n"
            '    raise AssertionError("H4: expected HandleSpent")\n\n\n'
            "async def main():\n"
            f"    adapter = load_adapter({self.engine_spec!r})\n"
            f"    clock = ManualClock({src(self.start)})\n"
            "    location = await adapter.create_location()\n"
            f"    store = await adapter.open_store(location, clock=clock, seed={self.seed})\n"
            "    try:\n"
            f"{body}\n"
            "        # ^ the engine and the model part here:\n"
            f"{comment}\n"
            "    finally:\n"
            "        await store.close()\n"
            "        await adapter.drop_location(location)\n\n\n"
            "asyncio.run(main())\n"
        )
