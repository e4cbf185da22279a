"""What the ecosystem's Python adapters share (docs/ecosystem.md): each library's mapping stays in its own package."""

from alkstore_ecosystem_kit.postgres_library import PostgresLibraryAdapter, dsn_from_env, quote_ident

__all__ = ["PostgresLibraryAdapter", "dsn_from_env", "quote_ident"]
