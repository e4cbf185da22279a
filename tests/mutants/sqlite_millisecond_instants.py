"""Mutant: instants kept at whole milliseconds by an engine that declares microseconds — breaks T1.

The engine of ``tests/engines/sqlite_milliseconds.py`` (every clock read and
every stored instant floored to the millisecond) without its declaration, so
its adapter claims the default resolution of 1 µs. ``enqueue_opts_resolution``
sees a 1.5 ms delay come back as 1 ms (T1), and a verbatim ``run_at`` lose its
microseconds (E3). The same engine declaring ``time_resolution_us = 1000`` is
certified: the contract asks an engine to keep instants as finely as it says.
"""

from __future__ import annotations

from tests.engines.sqlite_milliseconds import millisecond_adapter
from tests.mutants.catalog import Mutant

adapter = millisecond_adapter("mut-sqlite-millisecond-instants", declare=False)
MUTANT = Mutant(
    clause="T1",
    rows=("enqueue_opts_resolution",),
    what="keeps instants at whole milliseconds but declares the default resolution of 1 µs",
)
