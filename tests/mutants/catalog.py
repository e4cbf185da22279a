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
    driver: type[Any] | None = None,
    store: type[Any] | None = None,
    queue: type[Any] | None = None,
    handle: type[Any] | None = None,
) -> Any:
    """An adapter of the SQLite engine named ``name``, its storage and/or the kit's front replaced.

    ``driver``: a ``SqliteDriver`` subclass, where an SQLite mutant's fault
    belongs: the storage. The others are for the few faults no driver can
    reach because the kit owns that part of every op (the random source, the
    closed-store check, argument resolution, the one-shot handle): ``store``
    a ``SqliteStore`` subclass, ``queue`` a ``KitQueue`` subclass its
    ``queue()`` returns, ``handle`` a ``KitJobHandle`` subclass its claims
    return.
    """
    from alkstore_sqlite import SqliteAdapter, SqliteStore

    from alkstore_contract.kit import KitQueue

    attrs: dict[str, Any] = {"name": name}
    if driver is not None:
        attrs["driver_class"] = driver
    if handle is not None:
        queue = _handing_out(queue or KitQueue, handle)
    if queue is not None:
        store = _queue_of(store or SqliteStore, queue)
    if store is not None:
        attrs["store_class"] = store
    return type("MutantAdapter", (SqliteAdapter,), attrs)()


def sql_mutant(name: str, *statements: str, old: str, new: str) -> Any:
    """An adapter of the SQLite engine named ``name`` whose driver has ``old`` replaced by ``new`` in ``statements``.

    ``statements`` name ``SqliteDriver``'s SQL class attributes (``"CLAIM_SQL"``,
    say): most SQLite faults are one phrase of one statement, so the mutant
    is that phrase and nothing else. Each replacement goes through
    ``mutated``, so a mutant the engine has outgrown says so at import.
    """
    from alkstore_sqlite import SqliteDriver

    if not statements:
        raise ValueError(f"{name}: name at least one SqliteDriver SQL attribute to mutate")
    sql = {attr: mutated(getattr(SqliteDriver, attr), old, new) for attr in statements}
    return sqlite_mutant(name, driver=type("MutantDriver", (SqliteDriver,), sql))


def _handing_out(queue: type[Any], handle: type[Any]) -> type[Any]:
    """``queue`` whose claims return ``handle`` objects on the same claim (job and token)."""

    async def _claim(self: Any, op: str, worker_id: object, n: object) -> list[Any]:
        claimed = await queue._claim(self, op, worker_id, n)
        return [handle(self, each.job, each._token) for each in claimed]

    return type("MutantQueue", (queue,), {"_claim": _claim})


def _queue_of(store: type[Any], queue: type[Any]) -> type[Any]:
    """``store`` whose ``queue()`` returns ``queue`` objects on the name and options it checked."""

    def make_queue(self: Any, name: str, opts: Any = None) -> Any:
        checked = store.queue(self, name, opts)
        return queue(self, checked.name, checked.opts)

    return type("MutantStore", (store,), {"queue": make_queue})


def postgres_mutant(name: str, *, driver: type[Any]) -> Any:
    """An adapter of the Postgres engine named ``name`` whose stores run on ``driver`` (a ``PgDriver`` subclass).

    The driver loads asyncpg, so a Postgres mutant module imports ``PgDriver`` itself.
    """
    from alkstore_postgres import PgAdapter

    return type("MutantAdapter", (PgAdapter,), {"driver_class": driver, "name": name})()


def wire_mutant(module: str) -> Any:
    """The wire adapter of a broken variant of an engine in another language: ``tests/mutants/MODULE.toml`` starts it.

    The manifest names the variant: a patched script (the Node.js engine's) or the engine's own binary run
    with a test-only switch in its environment (the Rust engine's ``ALKSTORE_RUST_MUTANT``).
    """
    from alkstore_contract.wire.adapter import load_wire_adapter

    return load_wire_adapter(str(PACKAGE_DIR / f"{module}.toml"))


def node_mutant(module: str) -> Any:
    """The wire adapter of a broken variant of the Node.js engine: ``tests/mutants/MODULE.toml`` starts it."""
    from alkstore_contract.wire.adapter import load_wire_adapter

    return load_wire_adapter(str(PACKAGE_DIR / f"{module}.toml"))
