"""The mutant catalog: every module in this package that assigns ``MUTANT = Mutant(...)`` and ``adapter``.

A mutant is a real engine with exactly one clause broken, written as a small
subclass. ``tests/test_mutants.py`` runs each mutant in a pytest subprocess of
its own (``tests/mutants/runner.py``) and asserts it is NOT CERTIFIED and
killed by a row that cites the broken clause; ``python -m
tests.mutants.kill_table`` runs every row on every mutant and writes
``docs/mutants.md``.

Shared-code mutants. A mutant may break code every engine shares (e.g.
``alkstore_contract.backoff``) by patching it when its module is imported; see
``shared_backoff_cap_7200.py``. That is safe because of two rules this package
keeps:

- a mutant module is imported only by the pytest subprocess that runs it,
  alone (``--alkstore-engine=tests.mutants.MODULE:adapter``); the kill table
  too runs one subprocess per mutant;
- ``catalog()`` never imports a mutant module: it reads ``MUTANT`` from the
  module's source (its arguments must be literals), so listing the catalog in
  the test process patches nothing.

So a shared-code mutant patches at import, before the suite imports its rows,
exactly as if the shared source said so, and no other engine's run sees it.
Nothing else may import a mutant module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Mutant:
    """What a mutant breaks and which rows are meant to catch it."""

    clause: str
    """The contract clause the mutant breaks (e.g. ``"C5"``)."""
    rows: tuple[str, ...]
    """Rows meant to kill it, run before the others; at least one of them must fail, citing ``clause``."""
    what: str
    """The fault in one sentence."""
    clock: str | None = None
    """``"system"``: run it with ``--alkstore-clock=system`` (a fault only a system-clock run could miss)."""
    known_survivor: str | None = None
    """Why the suite cannot kill this mutant yet; its test is then a strict xfail, so it turns red once it can."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    module: str
    """The module's name in this package, also the mutant's test id."""
    mutant: Mutant

    @property
    def spec(self) -> str:
        """The ``--alkstore-engine`` value that loads the mutant."""
        return f"tests.mutants.{self.module}:adapter"


def _declared_mutant(path: Path) -> Mutant | None:
    """The ``MUTANT = Mutant(...)`` a module assigns at top level, read from its source without running it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == ["MUTANT"]
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Mutant"
        ):
            continue
        call = node.value
        if call.args:
            raise ValueError(f"{path.name}: give Mutant(...) keyword arguments only")
        try:
            fields = {str(kw.arg): ast.literal_eval(kw.value) for kw in call.keywords}
        except ValueError as exc:
            raise ValueError(
                f"{path.name}: MUTANT's arguments must be literals (the catalog reads them without importing "
                f"the module): {exc}"
            ) from exc
        return Mutant(**fields)
    return None


def catalog() -> list[CatalogEntry]:
    """Every mutant module, sorted by name; imports none of them (see the module docstring)."""
    entries: list[CatalogEntry] = []
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        mutant = _declared_mutant(path)
        if mutant is not None:
            entries.append(CatalogEntry(module=path.stem, mutant=mutant))
    return entries


def mutated(source: str, old: str, new: str) -> str:
    """``source`` (an engine's SQL, say) with every ``old`` replaced by ``new``.

    Refuses to build a mutant identical to the engine: when the engine no
    longer contains ``old``, the mutant is stale and says so at import,
    instead of passing every row as the unbroken engine would.
    """
    if old not in source:
        raise RuntimeError(f"mutant is stale: {old!r} is no longer in the engine's code")
    return source.replace(old, new)


def mem_mutant(name: str, *, driver: type[Any]) -> Any:
    """An adapter of the mem engine named ``name`` whose stores run on ``driver`` (a ``MemDriver`` subclass)."""
    from alkstore_mem import MemAdapter

    return type("MutantAdapter", (MemAdapter,), {"driver_class": driver, "name": name})()


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


def postgres_mutant(name: str, *, driver: type[Any]) -> Any:
    """An adapter of the Postgres engine named ``name`` whose stores run on ``driver`` (a ``PgDriver`` subclass).

    The driver loads asyncpg, so a Postgres mutant module imports ``PgDriver`` itself.
    """
    from alkstore_postgres import PgAdapter

    return type("MutantAdapter", (PgAdapter,), {"driver_class": driver, "name": name})()
