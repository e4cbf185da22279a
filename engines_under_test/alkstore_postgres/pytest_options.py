"""The Postgres engine's pytest options (entry point ``pytest11``: ``alkstore_postgres``).

``--alkstore-pg-dsn`` and the ini value ``alkstore_pg_dsn`` point the adapter
at a server; ``$ALKSTORE_PG_DSN`` sits between them (see ``adapter``). Options
must be declared in a ``pytest11`` module rather than a conftest, or pytest
ignores them for rows collected from an installed package (pytest #1596).

Nothing here imports asyncpg, so pytest starts without the ``postgres`` extra
and the adapter's ``unavailable_reason()`` says what is missing.
"""

from __future__ import annotations

import os

import pytest

from alkstore_contract.run import SESSION_PLUGIN_NAME, SuiteSession
from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV, PgAdapter, adapter
from alkstore_postgres.location import redact_dsn

OPTION = "--alkstore-pg-dsn"
INI = "alkstore_pg_dsn"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("alkstore-postgres", "alkstore Postgres engine")
    group.addoption(
        OPTION,
        dest=INI,
        default=None,
        metavar="DSN",
        help=f"Postgres server for the postgres engine (beats ${DSN_ENV} and the ini value; default {DEFAULT_DSN})",
    )
    parser.addini(INI, help=f"Postgres server for the postgres engine when neither {OPTION} nor ${DSN_ENV} is set")


def _dsn_and_source(config: pytest.Config) -> tuple[str | None, str]:
    from_option = config.getoption(INI)
    if from_option:
        return str(from_option), OPTION
    from_env = os.environ.get(DSN_ENV)
    if from_env:
        return from_env, f"${DSN_ENV}"
    from_ini = config.getini(INI)
    if from_ini:
        return str(from_ini), f"ini {INI}"
    return None, "default"


_PREVIOUS_DSN = pytest.StashKey[str | None]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_PREVIOUS_DSN] = adapter.configured_dsn
    dsn, _ = _dsn_and_source(config)
    adapter.configure(dsn)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Restore what was configured before, so an in-process pytester run leaves the outer session's DSN alone."""
    adapter.configure(config.stash.get(_PREVIOUS_DSN, None))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Echo the knob when the suite certifies a postgres engine, so a report shows which server it used.

    Only then: the option is declared in every session (the entry point loads this module
    whenever alkstore is installed), and a DSN line on a sqlite-only run reads as if that
    run had touched a server.
    """
    session = config.pluginmanager.get_plugin(SESSION_PLUGIN_NAME)
    if not isinstance(session, SuiteSession):
        return None
    if not any(isinstance(engine.adapter, PgAdapter) for engine in session.engines):
        return None
    _, source = _dsn_and_source(config)
    return f"alkstore postgres DSN: {redact_dsn(adapter.dsn)} (from {source})"
