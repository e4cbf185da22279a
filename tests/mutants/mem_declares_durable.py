"""Mutant: the in-memory engine declares ``durable`` — breaks P3, and only ``durability`` can tell.

Every required row passes on it (it is the real mem engine); the one thing
wrong is the claim on its adapter. The ``durability`` row, a capability row,
reopens its location in another process after a kill -9 and finds nothing
there. A capability the engine declares is part of its certificate, so this
engine must not be certified, although no required row fails.
"""

from __future__ import annotations

from alkstore_mem import MemAdapter

from alkstore_contract.adapter import Capability
from tests.mutants.catalog import Mutant


class DeclaresDurable(MemAdapter):
    name = "mut-mem-declares-durable"
    capabilities = MemAdapter.capabilities | {Capability.DURABLE}


adapter = DeclaresDurable()
MUTANT = Mutant(
    clause="P3", rows=("durability",), what="declares durable, but keeps jobs in this process's memory only"
)
