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
formula — R2's range is a table of literal ``(low, high)`` rows, its
arithmetic shown in a comment per row. ``tests/test_expected_table.py``
checks the shared code against this table, never the reverse: the table is
the spec.

To check a (base, attempts) pair no row lists yet, add its row here, worked
out by hand from R2's text.
"""

from __future__ import annotations

from typing import Final

LAST_ERROR_MAX_ATTEMPTS: Final = "max attempts exceeded"
"""R4 (a retry on the last attempt, no error given) and X2 step 3 (a lapsed lease with no attempt left)."""
LAST_ERROR_FAILED: Final = "failed"
"""D1: ``fail()`` without an error."""
LAST_ERROR_EXPIRED: Final = "expired"
"""X2 step 2: a live job swept past its ``expires_at``."""

BACKOFF_CAP_S: Final = 3600.0
"""R2: no backoff delay drawn without an explicit ``delay`` is longer than one hour."""

R2_RANGE_S: Final[dict[tuple[float, int], tuple[float, float]]] = {
    (0.1, 1): (0.05, 0.1),  # 0.1·2^0 = 0.1
    (0.1, 2): (0.1, 0.2),  # 0.1·2^1 = 0.2
    (0.1, 3): (0.2, 0.4),  # 0.1·2^2 = 0.4
    (2.5, 1): (1.25, 2.5),  # 2.5·2^0 = 2.5
    (2.5, 2): (2.5, 5.0),  # 2.5·2^1 = 5
    (2.5, 3): (5.0, 10.0),  # 2.5·2^2 = 10
    (4.0, 1): (2.0, 4.0),  # 4·2^0 = 4
    (4.0, 2): (4.0, 8.0),  # 4·2^1 = 8
    (4.0, 3): (8.0, 16.0),  # 4·2^2 = 16
    (0.5, 1): (0.25, 0.5),  # 0.5·2^0 = 0.5
    (0.5, 2): (0.5, 1.0),  # 0.5·2^1 = 1
    (0.5, 3): (1.0, 2.0),  # 0.5·2^2 = 2
    (0.5, 4): (2.0, 4.0),  # 0.5·2^3 = 4
    (0.5, 5): (4.0, 8.0),  # 0.5·2^4 = 8
    (0.5, 6): (8.0, 16.0),  # 0.5·2^5 = 16
    (0.5, 7): (16.0, 32.0),  # 0.5·2^6 = 32
    (0.5, 8): (32.0, 64.0),  # 0.5·2^7 = 64
    (0.5, 9): (64.0, 128.0),  # 0.5·2^8 = 128
    (0.5, 10): (128.0, 256.0),  # 0.5·2^9 = 256
    (0.5, 11): (256.0, 512.0),  # 0.5·2^10 = 512
    (0.5, 12): (512.0, 1024.0),  # 0.5·2^11 = 1024
    (0.5, 13): (1024.0, 2048.0),  # 0.5·2^12 = 2048
    (0.5, 14): (1800.0, 3600.0),  # 0.5·2^13 = 4096, capped
    (0.5, 40): (1800.0, 3600.0),  # 0.5·2^39 = 2.749e+11, capped
    (2.0, 1): (1.0, 2.0),  # 2·2^0 = 2
    (2.0, 2): (2.0, 4.0),  # 2·2^1 = 4
    (2.0, 3): (4.0, 8.0),  # 2·2^2 = 8
    (2.0, 4): (8.0, 16.0),  # 2·2^3 = 16
    (2.0, 5): (16.0, 32.0),  # 2·2^4 = 32
    (2.0, 6): (32.0, 64.0),  # 2·2^5 = 64
    (2.0, 7): (64.0, 128.0),  # 2·2^6 = 128
    (2.0, 8): (128.0, 256.0),  # 2·2^7 = 256
    (2.0, 9): (256.0, 512.0),  # 2·2^8 = 512
    (2.0, 10): (512.0, 1024.0),  # 2·2^9 = 1024
    (2.0, 11): (1024.0, 2048.0),  # 2·2^10 = 2048
    (2.0, 12): (1800.0, 3600.0),  # 2·2^11 = 4096, capped
    (2.0, 13): (1800.0, 3600.0),  # 2·2^12 = 8192, capped
    (2.0, 14): (1800.0, 3600.0),  # 2·2^13 = 16384, capped
    (2.0, 40): (1800.0, 3600.0),  # 2·2^39 = 1.1e+12, capped
    (5.0, 1): (2.5, 5.0),  # 5·2^0 = 5
    (5.0, 2): (5.0, 10.0),  # 5·2^1 = 10
    (5.0, 3): (10.0, 20.0),  # 5·2^2 = 20
    (5.0, 4): (20.0, 40.0),  # 5·2^3 = 40
    (5.0, 5): (40.0, 80.0),  # 5·2^4 = 80
    (5.0, 6): (80.0, 160.0),  # 5·2^5 = 160
    (5.0, 7): (160.0, 320.0),  # 5·2^6 = 320
    (5.0, 8): (320.0, 640.0),  # 5·2^7 = 640
    (5.0, 9): (640.0, 1280.0),  # 5·2^8 = 1280
    (5.0, 10): (1280.0, 2560.0),  # 5·2^9 = 2560
    (5.0, 11): (1800.0, 3600.0),  # 5·2^10 = 5120, capped
    (5.0, 12): (1800.0, 3600.0),  # 5·2^11 = 10240, capped
    (5.0, 13): (1800.0, 3600.0),  # 5·2^12 = 20480, capped
    (5.0, 14): (1800.0, 3600.0),  # 5·2^13 = 40960, capped
    (5.0, 40): (1800.0, 3600.0),  # 5·2^39 = 2.749e+12, capped
    (5.0, 10_000): (1800.0, 3600.0),  # 5·2^9999: past any float, capped all the same (no overflow)
    (10.0, 1): (5.0, 10.0),  # 10·2^0 = 10
    (10.0, 2): (10.0, 20.0),  # 10·2^1 = 20
    (10.0, 3): (20.0, 40.0),  # 10·2^2 = 40
    (10.0, 4): (40.0, 80.0),  # 10·2^3 = 80
    (10.0, 5): (80.0, 160.0),  # 10·2^4 = 160
    (10.0, 6): (160.0, 320.0),  # 10·2^5 = 320
    (10.0, 7): (320.0, 640.0),  # 10·2^6 = 640
    (10.0, 8): (640.0, 1280.0),  # 10·2^7 = 1280
    (10.0, 9): (1280.0, 2560.0),  # 10·2^8 = 2560
    (10.0, 10): (1800.0, 3600.0),  # 10·2^9 = 5120, capped
    (10.0, 11): (1800.0, 3600.0),  # 10·2^10 = 10240, capped
    (10.0, 12): (1800.0, 3600.0),  # 10·2^11 = 20480, capped
    (10.0, 13): (1800.0, 3600.0),  # 10·2^12 = 40960, capped
    (10.0, 14): (1800.0, 3600.0),  # 10·2^13 = 81920, capped
    (10.0, 40): (1800.0, 3600.0),  # 10·2^39 = 5.498e+12, capped
    (60.0, 1): (30.0, 60.0),  # 60·2^0 = 60
    (60.0, 2): (60.0, 120.0),  # 60·2^1 = 120
    (60.0, 3): (120.0, 240.0),  # 60·2^2 = 240
    (60.0, 4): (240.0, 480.0),  # 60·2^3 = 480
    (60.0, 5): (480.0, 960.0),  # 60·2^4 = 960
    (60.0, 6): (960.0, 1920.0),  # 60·2^5 = 1920
    (60.0, 7): (1800.0, 3600.0),  # 60·2^6 = 3840, capped
    (60.0, 8): (1800.0, 3600.0),  # 60·2^7 = 7680, capped
    (60.0, 9): (1800.0, 3600.0),  # 60·2^8 = 15360, capped
    (60.0, 10): (1800.0, 3600.0),  # 60·2^9 = 30720, capped
    (60.0, 11): (1800.0, 3600.0),  # 60·2^10 = 61440, capped
    (60.0, 12): (1800.0, 3600.0),  # 60·2^11 = 122880, capped
    (60.0, 13): (1800.0, 3600.0),  # 60·2^12 = 245760, capped
    (60.0, 14): (1800.0, 3600.0),  # 60·2^13 = 491520, capped
    (60.0, 40): (1800.0, 3600.0),  # 60·2^39 = 3.299e+13, capped
    (600.0, 1): (300.0, 600.0),  # 600·2^0 = 600
    (600.0, 2): (600.0, 1200.0),  # 600·2^1 = 1200
    (600.0, 3): (1200.0, 2400.0),  # 600·2^2 = 2400
    (600.0, 4): (1800.0, 3600.0),  # 600·2^3 = 4800, capped
    (600.0, 5): (1800.0, 3600.0),  # 600·2^4 = 9600, capped
    (600.0, 6): (1800.0, 3600.0),  # 600·2^5 = 19200, capped
    (600.0, 7): (1800.0, 3600.0),  # 600·2^6 = 38400, capped
    (600.0, 8): (1800.0, 3600.0),  # 600·2^7 = 76800, capped
    (600.0, 9): (1800.0, 3600.0),  # 600·2^8 = 153600, capped
    (600.0, 10): (1800.0, 3600.0),  # 600·2^9 = 307200, capped
    (600.0, 11): (1800.0, 3600.0),  # 600·2^10 = 614400, capped
    (600.0, 12): (1800.0, 3600.0),  # 600·2^11 = 1.229e+06, capped
    (600.0, 13): (1800.0, 3600.0),  # 600·2^12 = 2.458e+06, capped
    (600.0, 14): (1800.0, 3600.0),  # 600·2^13 = 4.915e+06, capped
    (600.0, 40): (1800.0, 3600.0),  # 600·2^39 = 3.299e+14, capped
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
            "alkstore_contract/suite/expected.py, worked out by hand from docs/contract.md R2"
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
