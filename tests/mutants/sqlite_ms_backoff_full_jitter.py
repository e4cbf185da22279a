"""Mutant: a millisecond engine, declared as one, whose backoff draws over ``[0, cap]`` — breaks R2.

The ``model_based`` row widens R2's bracket by a declared resolution less 1 µs
(``Model.slack``, ``DEC-time-resolution``), so that an engine keeping whole
milliseconds may round a jittered delay to the nearest one it can store. This
mutant is that engine (``tests.engines.sqlite_milliseconds``, declaring 1 ms)
with the full-jitter random source of ``sqlite_backoff_full_jitter``: half its
retries come back sooner than ``cap/2``, by far more than a millisecond once
the base is a few of them. ``model_based`` must still catch it: the slack
forgives the rounding a declared resolution implies, and nothing more.
"""

from __future__ import annotations

from tests.engines.sqlite_milliseconds import MS_US, MillisecondDriver
from tests.mutants.catalog import Mutant, sqlite_mutant
from tests.mutants.sqlite_backoff_full_jitter import FullJitterStore

_undeclared = sqlite_mutant("mut-sqlite-ms-backoff-full-jitter", driver=MillisecondDriver, store=FullJitterStore)
adapter = type("MillisecondMutantAdapter", (type(_undeclared),), {"time_resolution_us": MS_US})()
MUTANT = Mutant(
    clause="R2",
    rows=("model_based",),
    what="a declared millisecond engine whose retry() without a delay draws over [0, cap] (full jitter)",
)
