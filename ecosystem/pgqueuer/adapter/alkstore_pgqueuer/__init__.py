"""pgqueuer, the Postgres job queue library, judged by the contract: its adapter (docs/ecosystem.md)."""

from alkstore_pgqueuer.adapter import PgqueuerAdapter, adapter

__all__ = ["PgqueuerAdapter", "adapter"]
