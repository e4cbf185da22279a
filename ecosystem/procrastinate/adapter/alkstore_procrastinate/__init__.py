"""procrastinate, the Postgres task queue library, judged by the contract: its adapter (docs/ecosystem.md)."""

from alkstore_procrastinate.adapter import ProcrastinateAdapter, adapter

__all__ = ["ProcrastinateAdapter", "adapter"]
