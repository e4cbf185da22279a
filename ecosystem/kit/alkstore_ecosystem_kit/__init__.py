"""What the ecosystem's Python code shares (docs/ecosystem.md): each library's mapping stays in its own package.

The adapters share the Postgres plumbing (``postgres_library``); the runtime-faults runners share how their
``describe`` writes its faults, promises and caveats (``runner_description``). The Postgres names below load on
first use, so a runner that imports ``runner_description`` alone does not load the Postgres engine with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alkstore_ecosystem_kit.postgres_library import PostgresLibraryAdapter, dsn_from_env, quote_ident

__all__ = ["PostgresLibraryAdapter", "dsn_from_env", "quote_ident"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from alkstore_ecosystem_kit import postgres_library

        return getattr(postgres_library, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
