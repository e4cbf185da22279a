"""One structured stream on stderr: every log record a worker process makes, as one JSON object per line.

``alkstore worker`` calls ``configure`` before anything else, so what the
runtime says (``alkstore_worker.events.emit``) and what anything else in the
process says — a driver's logger (asyncpg's), asyncio's "exception never
retrieved", a ``warnings.warn`` of a library, an exception nobody caught in a
thread or in the main program — reaches the log shipper in the same shape,
never as a raw multi-line traceback that a line-oriented parser splits::

    {"timestamp": "2026-12-06T01:02:03.456789Z", "level": "WARNING", "logger": "alkstore_worker",
     "event": "claim_error", "queue": "emails", "error": "ConnectionRefusedError(...)"}

Records of other loggers get ``event`` ``log`` (``warning`` for a captured
``warnings.warn``) and their text under ``message``; a record carrying an
exception adds ``error`` (``{"type": ..., "message": ...}``) and the whole
traceback, as one string, under ``traceback``.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from datetime import UTC, datetime
from types import TracebackType
from typing import TextIO

EVENT_ATTR = "alkstore_event"
"""The ``extra`` key ``emit`` puts the event's name under; ``FIELDS_ATTR`` holds its fields."""
FIELDS_ATTR = "alkstore_fields"


class JsonLines(logging.Formatter):
    """A record as one JSON object: ``timestamp`` (ISO-8601, UTC), ``level``, ``logger``, ``event``, then fields."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        line: dict[str, object] = {"timestamp": stamp, "level": record.levelname, "logger": record.name}
        event = getattr(record, EVENT_ATTR, None)
        if event is not None:
            line["event"] = event
            line.update(getattr(record, FIELDS_ATTR, {}))
        else:
            line["event"] = "warning" if record.name == "py.warnings" else "log"
            line["message"] = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line["error"] = {"type": type(exc).__qualname__, "message": str(exc)}
            line["traceback"] = self.formatException(record.exc_info)
        elif record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, default=repr)


def configure(level: str | int, stream: TextIO | None = None) -> None:
    """Send every logger's records, captured warnings and uncaught exceptions to ``stream`` (stderr) as JSON lines.

    Replaces the root logger's handlers (a library that configured its own
    stays in the stream: its records propagate to the root); ``level`` is the
    root's, so ``--log-level`` filters every logger alike.
    """
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread


def _log_uncaught(kind: type[BaseException], exc: BaseException, traceback: TracebackType | None) -> None:
    logging.getLogger("alkstore_worker").critical(
        "uncaught exception", exc_info=(kind, exc, traceback), extra={EVENT_ATTR: "uncaught_exception"}
    )


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is not None:
        _log_uncaught(args.exc_type, args.exc_value, args.exc_traceback)
