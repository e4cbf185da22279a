"""How the engine's SQL templates become the text one store runs: its schema, table and columns filled in.

Templates name the table ``{jobs}``, the schema ``{schema}`` (for its
functions) and the snapshot columns ``{columns}`` / ``{j_columns}``. Table
names are spliced into the text, qualified with the quoted schema, rather than
found through ``search_path``: a qualified text names its table wherever it
runs (a pooler in transaction mode such as PgBouncer does not carry session
settings; a ``public.jobs`` can never shadow the store's table), and it reads
unambiguously in ``pg_stat_activity`` and the server log. Each store renders
its texts once and keeps them constant, so asyncpg's per-connection statement
cache prepares each one once.
"""

from __future__ import annotations

from alkstore_contract.types import JOB_FIELDS
from alkstore_postgres.location import quote_ident

JOB_COLUMNS = JOB_FIELDS
"""The columns a snapshot needs, in ``Job``'s field order (the claim token stays in the table)."""

CLOCK_CTE = "clock AS (SELECT COALESCE($1::timestamptz, statement_timestamp()) AS now)"
"""``now`` read once per statement: the injected clock's instant ($1), else the server's (contract T3)."""
NOW = "(SELECT now FROM clock)"
MICROS = "::bigint * interval '1 microsecond'"
"""Appended to a parameter holding a duration in whole microseconds (``duration_us``), to make it an interval."""


def placeholders(schema: str) -> dict[str, str]:
    """What a template's ``{...}`` stand for on ``schema``."""
    quoted = quote_ident(schema)
    return {
        "jobs": f"{quoted}.jobs",
        "schema": quoted,
        "columns": ", ".join(JOB_COLUMNS),
        "j_columns": ", ".join(f"j.{column}" for column in JOB_COLUMNS),
    }


def render(template: str, schema: str) -> str:
    """``template`` as a store on ``schema`` runs it."""
    return template.format(**placeholders(schema))
