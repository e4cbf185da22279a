"""``--metrics-port``: the worker's counters as a Prometheus text endpoint, by task and queue.

Counted from the events the runtime emits (``alkstore_worker.events``), so
the metrics and the log lines cannot disagree; the in-flight gauge reads the
worker's ``Counters``, and the claim latency is observed where the counters
record each claim. ``prometheus_client`` is an optional dependency
(``pip install 'alkstore[metrics]'``); without it the option is refused in
one line saying so. Each worker process serves its own endpoint: under
``--processes N`` child k (from 0) serves on port + k.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from alkstore_worker.events import OBSERVERS, Counters, emit

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

INSTALL_HINT = "pip install 'alkstore[metrics]'"

JOB_COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "started": ("Runs started (a handler called).", ("start",)),
    "succeeded": ("Runs whose handler returned and whose ack the store accepted.", ("success",)),
    "failed": (
        "Runs that ended in an error (the handler raised or timed out, or the job could not run): "
        "each was retried or dead-lettered.",
        ("retry", "dead"),
    ),
    "retried": ("Runs settled by a retry the store accepted.", ("retry",)),
    "dead": ("Jobs this worker dead-lettered.", ("dead",)),
    "cancelled": ("Runs cancelled because their lease was lost.", ("cancelled", "lease_lost")),
    "handed_back": ("Runs handed back on a stop.", ("handed_back",)),
    "settle_errors": ("Settlements (ack, retry, fail) that failed on a store error.", ("settle_error",)),
    "settle_retries": ("Settlements tried again after a store error.", ("settle_retry",)),
}
"""Each job counter (``alkstore_jobs_<name>_total{task, queue}``): its help, and the events that count it."""


def missing_dependency() -> str | None:
    """Why ``--metrics-port`` cannot be served here (one line naming the install), or ``None``."""
    try:
        import prometheus_client  # noqa: F401 - only whether it imports
    except ModuleNotFoundError:
        return f"--metrics-port needs the prometheus_client package: {INSTALL_HINT}"
    return None


class Metrics:
    """The worker's Prometheus metrics, in a registry of their own, fed by the events and the counters."""

    def __init__(self, counters: Counters) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        jobs: dict[str, Any] = {
            name: Counter(f"alkstore_jobs_{name}", text, ("task", "queue"), registry=self.registry)
            for name, (text, _events) in JOB_COUNTERS.items()
        }
        self._by_event: dict[str, list[Any]] = {}
        for name, (_text, events) in JOB_COUNTERS.items():
            for event in events:
                self._by_event.setdefault(event, []).append(jobs[name])
        in_flight = Gauge("alkstore_jobs_in_flight", "Jobs this worker holds and runs now.", registry=self.registry)
        in_flight.set_function(lambda: counters.in_flight)
        self._claims = Histogram(
            "alkstore_claim_seconds",
            "How long one claim call (claim_one or claim_batch) took.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=self.registry,
        )
        self._counters = counters
        self._server: WSGIServer | None = None

    def observe(self, event: str, fields: Mapping[str, object]) -> None:
        """Count one event (an ``events.OBSERVERS`` callback)."""
        counters = self._by_event.get(event)
        if counters is None or (event == "lease_lost" and "at" in fields):
            return  # a lease_lost with "at" is a refused settlement after the run ended, not a cancelled run
        task, queue = fields.get("task"), fields.get("queue")
        for counter in counters:
            counter.labels(task="" if task is None else str(task), queue="" if queue is None else str(queue)).inc()

    def serve(self, port: int, address: str) -> int:
        """Serve ``/metrics`` on ``address:port`` from a daemon thread and start counting; the port it bound."""
        from prometheus_client import start_http_server

        self._server, _thread = start_http_server(port, address, registry=self.registry)
        OBSERVERS.append(self.observe)
        self._counters.claim_observers.append(self._claims.observe)
        bound = int(self._server.server_address[1])
        emit("metrics_serving", address=address, port=bound)
        return bound

    def close(self) -> None:
        """Stop counting and serving."""
        if self.observe in OBSERVERS:
            OBSERVERS.remove(self.observe)
        if self._claims.observe in self._counters.claim_observers:
            self._counters.claim_observers.remove(self._claims.observe)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
