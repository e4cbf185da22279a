"""Counting the statements and round trips of a run, from the client side, for every driver alike.

Counting runs are separate from the timed runs (a trace callback costs a GIL
round trip per statement on SQLite), on a smaller backlog; the counts are per
job, so the size does not matter. While ``counting()`` is active:

- SQLite: every connection opened (by aiosqlite or stdlib ``sqlite3``) gets a
  trace callback that counts each statement SQLite runs, ``BEGIN``/``COMMIT``
  included; each aiosqlite call is one thread hop, counted as a round trip
  (stdlib ``sqlite3`` has none).
- asyncpg: each extended-protocol execution is one statement and one round
  trip, through the connection or a prepared statement (the Postgres engine
  runs its statements prepared); a simple-protocol ``execute(text)`` is one
  round trip carrying the text's statements (asyncpg's pool reset query is
  four). The one-off ``PREPARE`` of a statement on each connection is not
  counted.
- psycopg (procrastinate): each cursor ``execute`` is one statement and one
  round trip.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from bench.model import Counts


@dataclass(slots=True)
class Tally:
    """Statements and round trips seen while started."""

    active: bool = False
    statements: int = 0
    round_trips: int = 0

    def start(self) -> None:
        self.statements = self.round_trips = 0
        self.active = True

    def stop(self, jobs: int) -> Counts:
        self.active = False
        return Counts(statements_per_job=self.statements / jobs, round_trips_per_job=self.round_trips / jobs)

    def add(self, statements: int, round_trips: int) -> None:
        if self.active:
            self.statements += statements
            self.round_trips += round_trips


def _statements_in(text: str) -> int:
    return max(1, sum(1 for part in text.split(";") if part.strip()))


@contextmanager
def _patched(owner: Any, name: str, make: Callable[[Any], Any]) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def _counted(tally: Tally, statements: int, round_trips: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A patch maker for an async method each call of which is ``statements`` statements in ``round_trips`` trips."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            tally.add(statements, round_trips)
            return await original(self, *args, **kwargs)

        return counted

    return make


def _sqlite(stack: ExitStack, tally: Tally) -> None:
    def trace(statement: str) -> None:
        if not statement.startswith("--"):  # trigger sub-programs are reported with a "--" prefix
            tally.add(1, 0)

    def make_connect(original: Callable[..., sqlite3.Connection]) -> Callable[..., sqlite3.Connection]:
        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = original(*args, **kwargs)
            conn.set_trace_callback(trace)
            return conn

        return connect

    stack.enter_context(_patched(sqlite3, "connect", make_connect))

    import aiosqlite

    stack.enter_context(_patched(aiosqlite.Connection, "_execute", _counted(tally, 0, 1)))


def _asyncpg(stack: ExitStack, tally: Tally) -> None:
    try:
        from asyncpg.connection import Connection
        from asyncpg.prepared_stmt import PreparedStatement
    except ImportError:
        return

    make_extended = _counted(tally, 1, 1)

    def make_simple(original: Callable[..., Any]) -> Callable[..., Any]:
        async def execute(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            if not args:  # with arguments, execute() goes through _execute, counted there
                tally.add(_statements_in(query), 1)
            return await original(self, query, *args, **kwargs)

        return execute

    def make_many(original: Callable[..., Any]) -> Callable[..., Any]:
        async def _executemany(self: Any, query: str, args: Any, *rest: Any, **kwargs: Any) -> Any:
            rows = list(args)
            tally.add(len(rows), 1)
            return await original(self, query, rows, *rest, **kwargs)

        return _executemany

    stack.enter_context(_patched(Connection, "_execute", make_extended))
    for name in ("fetch", "fetchrow", "fetchval"):  # a prepared statement's executions, each one round trip
        stack.enter_context(_patched(PreparedStatement, name, make_extended))
    stack.enter_context(_patched(Connection, "execute", make_simple))
    stack.enter_context(_patched(Connection, "_executemany", make_many))


def _psycopg(stack: ExitStack, tally: Tally) -> None:
    try:
        from psycopg import AsyncCursor
    except ImportError:
        return

    stack.enter_context(_patched(AsyncCursor, "execute", _counted(tally, 1, 1)))


@contextmanager
def counting() -> Iterator[Tally]:
    """Count, while the returned tally is started, what every driver in this process sends."""
    tally = Tally()
    with ExitStack() as stack:
        _sqlite(stack, tally)
        _asyncpg(stack, tally)
        _psycopg(stack, tally)
        yield tally
