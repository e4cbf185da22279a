"""What a deferred job's stored payload holds: the task's name beside the caller's payload.

Several tasks may share a queue, so the job itself must say which function
runs it. The envelope is a plain JSON object, ``{"task": NAME, "payload": ...}``,
so any engine stores it (E8) and ``get_job`` shows it readably. A job the
runtime did not write (a bare payload enqueued by hand) has no envelope, and
the worker dead-letters it with the reason rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

TASK_KEY = "task"
PAYLOAD_KEY = "payload"
REQUEUED_FROM_KEY = "requeued_from"


class EnvelopeError(ValueError):
    """A claimed job's payload is not a task envelope; the message says what it holds instead."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A task name, its payload, and the job this one was handed back from (a stop or a dead-letter retry)."""

    task: str
    payload: object
    requeued_from: object = None

    def encode(self) -> dict[str, object]:
        """The JSON object stored as the job's payload."""
        body: dict[str, object] = {TASK_KEY: self.task, PAYLOAD_KEY: self.payload}
        if self.requeued_from is not None:
            body[REQUEUED_FROM_KEY] = self.requeued_from
        return body


def open_envelope(stored: object) -> Envelope:
    """The envelope of a claimed job's payload, or ``EnvelopeError`` saying why it is not one."""
    if not isinstance(stored, dict) or not isinstance(stored.get(TASK_KEY), str) or PAYLOAD_KEY not in stored:
        shown = repr(stored)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        raise EnvelopeError(
            f"payload {shown} is not a task envelope (a JSON object with a str {TASK_KEY!r} and a {PAYLOAD_KEY!r}); "
            "enqueue with task.defer(), not queue.enqueue()"
        )
    return Envelope(stored[TASK_KEY], stored[PAYLOAD_KEY], stored.get(REQUEUED_FROM_KEY))
