"""Shared-code mutant: one line of ``validation.validate_queue_name`` — breaks S1 for every engine.

a queue name holds no control character, Unicode category Cc (S1), which includes C1 (U+0080–U+009F);
here ``validate_queue_name`` stops at ASCII.

``patching.edit_function`` recompiles the function with the changed line, in place, on the adapter's
first ``open_store``; ``bounds_at_their_edge`` probes the bound itself (its values from
``alkstore_contract.suite.expected``), where ``validation_and_closed_store``'s far-off values never reach.
"""

from __future__ import annotations

from functools import partial

from tests.mutants.catalog import Mutant
from tests.mutants.patching import edit_function, shared_code_mutant

adapter = shared_code_mutant(
    "mut-shared-queue-name-c1-accepted",
    partial(
        edit_function,
        "alkstore_contract.validation",
        "validate_queue_name",
        'if unicodedata.category(ch) == "Cc":',
        'if unicodedata.category(ch) == "Cc" and ch < "\\x80":',
    ),
)
MUTANT = Mutant(
    clause="S1",
    rows=("bounds_at_their_edge",),
    what="the shared name check refuses only ASCII control characters, so C1 controls (U+0080-U+009F) pass",
)
