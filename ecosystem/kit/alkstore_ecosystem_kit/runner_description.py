"""What the Python runners' ``describe`` write alike (docs/runtime-faults.md, "describe"), written once.

Each runner's description is its own: its library's settings, the quotes of its docs and the rules they state. What
every runner wrote again is the faults a runner on its broker can take, and the shape of a promise or a caveat,
most of all the promise every library's docs make: none of an outcome under some faults. The harness checks the
printed JSON (``alkstore_faults.runner_program.parse_description``); these only write it.
"""

from __future__ import annotations

from typing import Literal, TypedDict

Broker = Literal["redis", "beanstalkd", "postgres", "amqp"]


class Caveat(TypedDict):
    """What the docs say of an outcome without promising a bound: the report quotes it beside the count."""

    outcome: str
    faults: list[str]
    quote: str
    doc: str


class Promise(Caveat):
    max: int


def every_fault(broker: Broker) -> list[str]:
    """Every fault the harness strikes a runner on ``broker`` with: the worker's, the cut of its connections, and
    the broker's restart as the harness makes it, on its data (Postgres, RabbitMQ) or, for a broker whose
    persistence is a choice (Redis's AOF, beanstalkd's binlog), with it and without it."""
    restarts = (
        ["broker_restart"] if broker in ("postgres", "amqp") else ["broker_restart_aof", "broker_restart_volatile"]
    )
    return ["kill9", "startup", "pause", *restarts, "net_cut", "slow_handler"]


def promise(outcome: str, faults: list[str], quote: str, doc: str) -> Promise:
    """A promise of none of ``outcome`` under ``faults`` (``"*"``: every fault the runner takes): ``max`` 0, the
    only bound any library's docs give."""
    return {"outcome": outcome, "faults": faults, "max": 0, "quote": quote, "doc": doc}


def caveat(outcome: str, faults: list[str], quote: str, doc: str) -> Caveat:
    return {"outcome": outcome, "faults": faults, "quote": quote, "doc": doc}
