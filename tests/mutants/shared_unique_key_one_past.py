"""Shared-code mutant: one line of ``validation.validate_unique_key`` — breaks K4 for every engine.

A unique key is 1 to 200 characters (K4); here ``validate_unique_key`` lets a key of 201 through,
so ``enqueue_unique`` stores a job under a key the contract refuses.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``unique_keys``'s leg "bad keys" offers a key of 201 characters and expects
``InvalidArgument`` naming ``unique_key`` with nothing stored.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-unique-key-one-past",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "validate_unique_key",
        "len(unique_key) > UNIQUE_KEY_MAX_CHARS:",
        "len(unique_key) > UNIQUE_KEY_MAX_CHARS + 1:",
    ),
)
MUTANT = Mutant(
    clause="K4",
    rows=("unique_keys",),
    what="the shared unique-key check lets a key of 201 characters through, one past its limit of 200",
)
