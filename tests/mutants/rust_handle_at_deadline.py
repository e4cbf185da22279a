"""Mutant: the Rust engine's handle ops succeed at exactly ``lease_expires_at`` — breaks H1.

The engine is ``engines_under_test/alkstore_rust``'s own binary, started with the
test-only switch ``ALKSTORE_RUST_MUTANT=lease_deadline_inclusive``
(``rust_handle_at_deadline.toml``), which makes the fence's ``>`` a ``>=``. It runs
on the system clock like the SQLite mutant of that boundary: ``lease_validity``'s
H1 boundary leg runs on a manual-clock twin of the engine and catches it there.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, wire_mutant

adapter = wire_mutant("rust_handle_at_deadline")
MUTANT = Mutant(
    clause="H1",
    rows=("lease_validity",),
    what="the Rust engine's handle ops succeed at exactly lease_expires_at (>= in the fence)",
    clock="system",
)
