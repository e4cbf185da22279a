"""Mutant: the Rust engine's handle ops are fenced by job id, state and lease, not by the claim — breaks H5.

The engine is ``engines_under_test/alkstore_rust``'s own binary, started with the
test-only switch ``ALKSTORE_RUST_MUTANT=fence_by_job_id`` (``rust_ack_unfenced.toml``),
which drops the token from the fence of ack, retry, fail and heartbeat; it is
certified through the wire protocol like the real engine. ``lease_validity``
catches it: an old handle's ack after a reclaim deletes the new holder's job.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, wire_mutant

adapter = wire_mutant("rust_ack_unfenced")
MUTANT = Mutant(
    clause="H5",
    rows=("lease_validity",),
    what="the Rust engine's handle ops match the job by id (processing, live lease) without checking the claim token",
)
