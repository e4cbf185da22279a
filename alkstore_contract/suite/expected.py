"""The contract's literal values, written out a second time for the rows, the model and the engine tests.

Part of the suite.

docs/contract.md states a few values outright: the three ``last_error``
strings (R4, D1, X2), the one-hour cap (R2) and R2's range
``[min(b·2^(a−1), 3600)/2, min(b·2^(a−1), 3600)]``. The engines draw theirs
from ``alkstore_contract.backoff`` and ``alkstore_contract.resolution``; if the
rows took their expected values from there too, a bug in that shared code
(a cap of 7200 s, an exponent off by one, a misspelt string) would move the
engines and the rows' expectations together and every engine would still
certify. So this module is the contract's text typed in again: it imports
nothing from ``backoff.py``, ``resolution.py`` or any engine, and it holds no
formula. R2's range is a table of literal ``(low, high)`` rows, kept once, in
``alkstore_contract/wire/literals.json``, where engines in other languages
read the same rows for their own tests; no engine computes anything from
those rows (what the Node.js kit reads from that file is the cap, which stays
typed in here too). ``tests/test_expected_table.py`` checks the shared code
against this table, never the reverse: the table is the spec.

To check a (base, attempts) pair no row lists yet, add its row to
``literals.json``, worked out by hand from R2's text.
"""

from __future__ import annotations

import json
from typing import Final

from alkstore_contract.wire import LITERALS_PATH

LAST_ERROR_MAX_ATTEMPTS: Final = "max attempts exceeded"
"""R4 (a retry on the last attempt, no error given) and X2 step 3 (a lapsed lease with no attempt left)."""
LAST_ERROR_FAILED: Final = "failed"
"""D1: ``fail()`` without an error."""
LAST_ERROR_EXPIRED: Final = "expired"
"""X2 step 2: a live job swept past its ``expires_at``."""

BACKOFF_CAP_S: Final = 3600.0
"""R2: no backoff delay drawn without an explicit ``delay`` is longer than one hour."""

R2_RANGE_S: Final[dict[tuple[float, int], tuple[float, float]]] = {
    (float(base), int(attempts)): (float(low), float(high))
    for base, attempts, low, high in json.loads(LITERALS_PATH.read_text(encoding="utf-8"))["r2_range_s"]
}
"""R2: ``(backoff base b in s, attempts a made) → (low, high)`` in s, the closed range a delay drawn by
``retry()`` without ``delay`` must land in. 2.5 is the manual-clock curve leg's base (a quarter of a row unit),
0.1 a small one for the system clock, 4 the SQLite engine test's; the rest cover attempts 1–14 and 40."""


def r2_range_s(base_s: float, attempts: int) -> tuple[float, float]:
    """R2's ``(low, high)`` for a job stamped with ``base_s`` after ``attempts`` attempts, from the table."""
    try:
        return R2_RANGE_S[(float(base_s), attempts)]
    except KeyError:
        raise KeyError(
            f"R2_RANGE_S has no row for base {base_s} s at attempt {attempts}: add one to "
            "alkstore_contract/wire/literals.json, worked out by hand from docs/contract.md R2"
        ) from None


# The bounds the contract's decisions fix (DEC-bounds, DEC-payload-json, DEC-worker-text, DEC-name-encoding,
# DEC-lease-minimum, S1, S2), typed in from docs/contract.md for the rows that probe each bound at its edge.
# Like the strings above they import nothing from ``validation.py``: an off-by-one there must not move them.

QUEUE_NAME_MAX_CHARS: Final = 200
"""S1: a queue name is "a non-empty str of at most 200 characters"."""
RESERVED_NAME_PREFIX: Final = "__"
"""S1: a queue name does not start with ``__``."""
CONTROL_CHARACTER_RANGES: Final = ((0x00, 0x1F), (0x7F, 0x9F))
"""S1: "without control characters (Unicode category Cc)": Cc is exactly C0 (U+0000–U+001F), DEL and C1
(U+007F–U+009F)."""
SURROGATE_RANGE: Final = (0xD800, 0xDFFF)
"""DEC-name-encoding, DEC-worker-text: a lone surrogate (U+D800–U+DFFF) is not encodable as UTF-8."""
MAX_DURATION_S: Final = 3_155_760_000
"""DEC-bounds: a duration is "at most 100 years": 100 × 365.25 days × 86 400 s = 3 155 760 000 s."""
MIN_LEASE_S: Final = 0.000_001
"""DEC-bounds, DEC-lease-minimum: a visibility timeout or a heartbeat's ``extend`` is "at least 1 µs"."""
PRIORITY_RANGE: Final = (-9_223_372_036_854_775_808, 9_223_372_036_854_775_807)
"""DEC-bounds: "``priority`` fits a signed 64-bit integer": −2^63 … 2^63 − 1."""
MAX_ATTEMPTS_RANGE: Final = (1, 2_147_483_647)
"""DEC-bounds: "``max_attempts`` is 1 … 2^31 − 1"."""
PAYLOAD_MAX_DEPTH: Final = 500
"""DEC-payload-json: "nesting deeper than 500 levels is refused" (500 nested lists or objects are accepted)."""
PAYLOAD_INT_MAX_DIGITS: Final = 4300
"""DEC-payload-json: "an int of more than 4300 digits is refused"."""
