"""The retry backoff curve (contract R2, R5): equal-jitter exponential, capped at one hour.

Part of the contract.

With ``a`` the attempts made so far (≥ 1) and ``b`` the stamped base:
``cap = min(b · 2^(a−1), 3600)`` and the delay is uniform over ``[cap/2, cap]``.
Half the delay is guaranteed (no thundering herd of instant retries), half is
jitter (retries of a failed batch spread out).
"""

from __future__ import annotations

import random

BACKOFF_CAP_S = 3600.0
_MAX_EXPONENT = 64
"""2**64 · any positive base is already far past the cap: clamping the exponent avoids overflow."""


def backoff_cap_s(attempts: int, base_s: float) -> float:
    """The upper end of the delay range after ``attempts`` attempts."""
    exponent = min(max(attempts, 1) - 1, _MAX_EXPONENT)
    return min(base_s * 2.0**exponent, BACKOFF_CAP_S)


def backoff_range_s(attempts: int, base_s: float) -> tuple[float, float]:
    """The closed range ``[cap/2, cap]`` a jittered delay must land in."""
    cap = backoff_cap_s(attempts, base_s)
    return cap / 2, cap


def backoff_delay_s(attempts: int, base_s: float, rng: random.Random) -> float:
    """One draw from the curve, using the engine's own (seedable) ``rng``."""
    low, high = backoff_range_s(attempts, base_s)
    return rng.uniform(low, high)
