"""The mutant catalog: every module in this package that defines ``MUTANT`` and ``adapter``.

A mutant is a real engine with exactly one clause broken, written as a small
subclass. ``tests/test_mutants.py`` runs the whole suite against every mutant
and asserts each is killed by a row that cites the broken clause; that run
also writes ``docs/mutants.md``.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Mutant:
    """What a mutant breaks and which rows are meant to catch it."""

    clause: str
    """The SPEC clause the mutant breaks (e.g. ``"C5"``)."""
    rows: tuple[str, ...]
    """Rows meant to kill it; at least one of them must fail, citing ``clause``."""
    what: str
    """The fault in one sentence."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    module: str
    name: str
    spec: str
    mutant: Mutant


def catalog() -> list[CatalogEntry]:
    """Every mutant module, sorted by name."""
    entries: list[CatalogEntry] = []
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name in {"catalog", "__init__"}:
            continue
        module = importlib.import_module(f"tests.mutants.{info.name}")
        mutant = getattr(module, "MUTANT", None)
        if isinstance(mutant, Mutant):
            entries.append(
                CatalogEntry(
                    module=info.name,
                    name=module.adapter.name,
                    spec=f"tests.mutants.{info.name}:adapter",
                    mutant=mutant,
                )
            )
    return sorted(entries, key=lambda e: e.name)


def mem_mutant(name: str, *, queue: type[Any] | None = None, handle: type[Any] | None = None) -> Any:
    """An adapter of the mem engine named ``name`` whose queue and/or handle classes are replaced.

    Saves each mem mutant the four-class subclass chain (adapter → store → queue → handle).
    """
    from alkstore_mem import MemAdapter, MemQueue, MemStore

    queue_attrs: dict[str, Any] = {} if handle is None else {"handle_class": handle}
    queue_class = type("MutantQueue", (queue or MemQueue,), queue_attrs)
    store_class = type("MutantStore", (MemStore,), {"queue_class": queue_class})
    adapter_class = type("MutantAdapter", (MemAdapter,), {"store_class": store_class, "name": name})
    return adapter_class()


def sqlite_mutant(
    name: str,
    *,
    queue: type[Any] | None = None,
    handle: type[Any] | None = None,
    database: type[Any] | None = None,
) -> Any:
    """An adapter of the SQLite engine named ``name`` whose queue, handle and/or database classes are replaced.

    Saves each SQLite mutant the subclass chain (adapter → store → queue → handle, store → database).
    """
    from alkstore_sqlite import SqliteAdapter, SqliteQueue, SqliteStore

    queue_attrs: dict[str, Any] = {} if handle is None else {"handle_class": handle}
    queue_class = type("MutantQueue", (queue or SqliteQueue,), queue_attrs)
    store_attrs: dict[str, Any] = {"queue_class": queue_class}
    if database is not None:
        store_attrs["database_class"] = database
    store_class = type("MutantStore", (SqliteStore,), store_attrs)
    adapter_class = type("MutantAdapter", (SqliteAdapter,), {"store_class": store_class, "name": name})
    return adapter_class()


def postgres_mutant(
    name: str,
    *,
    store: type[Any] | None = None,
    queue: type[Any] | None = None,
    handle: type[Any] | None = None,
) -> Any:
    """An adapter of the Postgres engine named ``name`` whose store, queue and/or handle classes are replaced.

    Saves each Postgres mutant the subclass chain (adapter → store → queue → handle). The classes load
    asyncpg, so a Postgres mutant module imports them itself; this helper only wires them together.
    """
    from alkstore_postgres import PgAdapter, PgQueue, PgStore

    queue_attrs: dict[str, Any] = {} if handle is None else {"handle_class": handle}
    queue_class = type("MutantQueue", (queue or PgQueue,), queue_attrs)
    store_class = type("MutantStore", (store or PgStore,), {"queue_class": queue_class})
    adapter_class = type("MutantAdapter", (PgAdapter,), {"store_class": store_class, "name": name})
    return adapter_class()
