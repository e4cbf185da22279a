"""Structured log lines and the counters a worker keeps.

Every line is one JSON object on the ``alkstore_worker`` logger (the CLI sends
it to stderr through ``alkstore_worker.logs``, which adds the timestamp, level
and logger), so a log shipper parses it without a pattern: ``{..., "event":
"start", "job": 7, "task": "send_email", "queue": "emails", "attempt": 1}``.
Events per job: ``start``, ``success``, ``retry`` (with ``delay_s``), ``dead``
(with ``error``), ``handed_back``, ``lease_lost``, ``cancelled`` (with ``reason``),
``settle_retry``. The counters are plain numbers a user exports however they like (``Counters.snapshot()``; the
CLI's ``--progress`` prints them on one line; ``--metrics-port`` serves them, by task and queue, from the events:
``alkstore_worker.metrics``). A ``Settlement`` is what an app's
``on_settled`` hooks get after each claim is settled, in the process that ran
it: the same facts as the log line, as an object (a log line is no API).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

from alkstore_contract.types import Job
from alkstore_worker.logs import EVENT_ATTR, FIELDS_ATTR

LOG = logging.getLogger("alkstore_worker")
Observer = Callable[[str, Mapping[str, object]], None]
OBSERVERS: list[Observer] = []
"""Called with every event ``emit`` is given, whatever the log level (``alkstore_worker.metrics`` counts them)."""


class _Line:
    """An event's JSON text, built only when a handler asks for the record's message (``alkstore_worker.logs``
    formats the fields themselves; a plain ``%(message)s`` handler, or a test's ``caplog``, gets this text)."""

    __slots__ = ("event", "fields")

    def __init__(self, event: str, fields: Mapping[str, object]) -> None:
        self.event = event
        self.fields = fields

    def __str__(self) -> str:
        return json.dumps({"event": self.event, **self.fields}, default=repr)


def emit(event: str, level: int = logging.INFO, /, **fields: object) -> None:
    """Log one structured line: ``event`` first, then ``fields`` (values that are not JSON are shown by repr);
    and tell each of ``OBSERVERS``."""
    for observer in OBSERVERS:
        observer(event, fields)
    if LOG.isEnabledFor(level):
        LOG.log(level, "%s", _Line(event, fields), extra={EVENT_ATTR: event, FIELDS_ATTR: fields})


@dataclass(frozen=True, slots=True)
class Settlement:
    """How the worker settled one claim (docs/worker.md, "Hooks").

    ``action`` is the handle operation the worker called: ``ack`` after the
    handler returned, ``retry`` or ``fail`` after it raised (or timed out, or
    the job could not run), ``hand_back`` on a stop, ``cancelled`` when the
    run lost its lease (a heartbeat refused, or the lease's deadline passed by
    the worker's clock) and was cancelled before any.
    ``accepted`` is whether the store took it: ``False`` when the lease had
    lapsed and the claim's token no longer held the job (contract H5), so
    another claim's outcome stands; always ``False`` for ``cancelled``. An
    operation that kept raising until the lease ended is not reported: whether
    it took effect is unknown (N3, N6).
    """

    job: Job
    """The job as this worker claimed it (its ``attempts`` is this run's attempt)."""
    task: str | None
    """The task's name, ``None`` when the payload named none."""
    payload: object
    """The task's payload (the envelope's), ``None`` when the job's payload was no envelope."""
    action: str
    accepted: bool


@dataclass
class Counters:
    """What one worker process did so far."""

    done: int = 0
    failed: int = 0
    """Jobs this worker dead-lettered (a non-retryable exception, the last attempt, an unknown task)."""
    retried: int = 0
    handed_back: int = 0
    cancelled: int = 0
    """Runs cancelled because their lease was lost (by the worker's clock, or a refused heartbeat)."""
    settle_retries: int = 0
    """Repeats of an ack, retry or fail that met an unreachable store (contract N6)."""
    settle_refused: int = 0
    """Repeated settles the store refused: the lease had lapsed by then, so the fence kept the job."""
    in_flight: int = 0
    claims: int = 0
    claimed_jobs: int = 0
    claim_seconds: float = 0.0
    claim_observers: list[Callable[[float], None]] = field(default_factory=list, repr=False, compare=False)
    """Called with each claim call's seconds (``--metrics-port``'s latency histogram); no counter."""

    def claimed(self, jobs: int, seconds: float) -> None:
        """Record one claim call: how many jobs it returned and how long it took."""
        self.claims += 1
        self.claimed_jobs += jobs
        self.claim_seconds += seconds
        for observer in self.claim_observers:
            observer(seconds)

    @property
    def mean_claim_latency_ms(self) -> float:
        """Mean time of one claim call, in milliseconds (0 before the first)."""
        return 1000 * self.claim_seconds / self.claims if self.claims else 0.0

    def snapshot(self) -> dict[str, float]:
        """The counters as a flat dict, for an exporter or a progress line: every field in declaration order but
        the raw ``claim_seconds``, which the rounded mean claim latency stands for."""
        data: dict[str, float] = {
            counter.name: getattr(self, counter.name)
            for counter in fields(self)
            if counter.name not in ("claim_seconds", "claim_observers")
        }
        data["mean_claim_latency_ms"] = round(self.mean_claim_latency_ms, 3)
        return data

    def progress_line(self) -> str:
        """One human line for ``--progress``."""
        return (
            f"done {self.done} · retried {self.retried} · dead {self.failed} · in flight {self.in_flight} · "
            f"claim {self.mean_claim_latency_ms:.2f} ms mean over {self.claims}"
        )


def report_progress(counters: Counters) -> None:
    """``--progress``: the counters as a human line when stderr is a terminal (someone watches it), else as a
    ``progress`` event, so a stream a program reads stays one JSON object per line."""
    if sys.stderr.isatty():
        sys.stderr.write(f"alkstore worker {os.getpid()}: {counters.progress_line()}\n")
        sys.stderr.flush()
    else:
        emit("progress", **counters.snapshot())
