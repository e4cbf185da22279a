"""Input rules of contract S1, S2, C6, E8, E9, written once for every engine.

Part of the contract.

Each check raises the contract's error with a message that names the argument,
shows the value (``describe_value``, which never raises) and states the rule,
and returns the normalised value so an engine stores exactly what was checked.
Engines call these before any I/O, so bad input never stores anything.

A rule that one engine's storage would need (no NUL in a worker id or an
error: Postgres ``text`` cannot hold it) is a rule of the contract, so every
engine refuses the same input with the same error.

``JobId`` and ``Duration`` lived here until 0.2; they are in
``alkstore_contract.types`` now, and ``alkstore_contract._moved`` serves the old
names here with a warning for one release. ``types`` imports these rules (its
``QueueOpts`` checks itself), so this module names a job id by what ``JobId``
stands for, ``int | str``, and imports nothing of ``types``: no import circle.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError

MAX_QUEUE_NAME_LENGTH = 200
RESERVED_PREFIX = "__"
MAX_DURATION_S = 100 * 365.25 * 24 * 3600
"""Upper bound of every duration (100 years): keeps ``now + d`` inside ``datetime``'s range."""
MIN_POSITIVE_DURATION_S = 1e-6
"""Lower bound of a duration that must be positive (a lease): 1 µs, the precision instants are kept at.

A shorter one would round to a lease that ends the instant it starts.
"""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
MAX_PAYLOAD_DEPTH = 500
MAX_PAYLOAD_INT_DIGITS = 4300
"""The most digits an int in a payload may have: CPython's default int/str conversion limit.

JSON text writes an int in decimal; beyond this limit ``json.dumps`` and
``json.loads`` raise ``ValueError`` (``sys.set_int_max_str_digits``). A fixed
bound, not the running process's setting, so every writer and reader agrees.
"""
_SMALLEST_TOO_LONG_INT = 10**MAX_PAYLOAD_INT_DIGITS
MAX_SHOWN_LENGTH = 80
_MAX_SHOWN_INT_BITS = 256
"""An int of at most 256 bits has at most 78 digits: its repr fits ``MAX_SHOWN_LENGTH`` whole."""
_LOG10_2 = math.log10(2)
_NEGATIVE_DURATION = "a duration must not be negative"
_TOO_LONG_DURATION = f"a duration must be at most {MAX_DURATION_S:.0f} s (100 years)"


def _int_digits(value: int) -> int:
    """The number of decimal digits of ``value`` (sign excluded), computed without ``str()``.

    ``str()`` of an int beyond CPython's conversion limit raises ``ValueError``,
    and below it costs time quadratic in the length; this costs a power of ten.
    """
    magnitude = abs(value)
    digits = max(1, int(magnitude.bit_length() * _LOG10_2))
    while magnitude >= 10**digits:
        digits += 1
    while digits > 1 and magnitude < 10 ** (digits - 1):
        digits -= 1
    return digits


def describe_value(value: object) -> str:
    """A short description of ``value`` for an error message; it never raises.

    The ``repr``, cut to 80 characters; an int too long to show whole is
    described by its digit count (``<int of 4301 digits>``) without converting
    it to text. A value whose ``repr`` fails (a container holding an int beyond
    CPython's str conversion limit, a hostile ``__repr__``) is described by its
    type, so reporting bad input can never itself fail.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _MAX_SHOWN_INT_BITS:
        sign = "negative " if value < 0 else ""
        return f"<{sign}int of {_int_digits(value)} digits>"
    try:
        text = repr(value)
    except Exception:  # any failure of repr() is reported by the value's type
        return f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= MAX_SHOWN_LENGTH else text[: MAX_SHOWN_LENGTH - 3] + "..."


def _utf8_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must be encodable as UTF-8 (no lone surrogates)"
    return None


def _text_problem(text: str) -> str | None:
    """What keeps ``text`` from being stored as-is by every engine: NUL (Postgres) or a lone surrogate."""
    if "\x00" in text:
        return "must not contain NUL characters ('\\x00')"
    return _utf8_problem(text)


def validate_queue_name(name: object) -> str:
    """contract S1: a non-empty str of at most 200 characters, no control characters, not ``__…``."""
    if not isinstance(name, str):
        raise InvalidName(f"name={describe_value(name)}: a queue name must be a str")
    if not name:
        raise InvalidName("name='': a queue name must not be empty")
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise InvalidName(
            f"name={describe_value(name)}: a queue name has at most {MAX_QUEUE_NAME_LENGTH} characters, got {len(name)}"
        )
    if name.startswith(RESERVED_PREFIX):
        raise InvalidName(f"name={describe_value(name)}: the prefix {RESERVED_PREFIX!r} is reserved")
    for ch in name:
        if unicodedata.category(ch) == "Cc":
            raise InvalidName(f"name={describe_value(name)}: a queue name must not contain control characters ({ch!r})")
    problem = _utf8_problem(name)
    if problem:
        raise InvalidName(f"name={describe_value(name)}: a queue name {problem}")
    return name


def validate_worker_id(worker_id: object) -> str:
    """contract C6: a non-empty str, UTF-8 encodable and without NUL, so every engine can store it.

    Postgres ``text`` cannot hold NUL; the rule is the contract's so the other
    engines refuse it too, rather than accept a claimant one engine cannot keep.
    """
    if not isinstance(worker_id, str) or not worker_id:
        raise InvalidName(f"worker_id={describe_value(worker_id)}: a worker id must be a non-empty str")
    problem = _text_problem(worker_id)
    if problem:
        raise InvalidName(f"worker_id={describe_value(worker_id)}: a worker id {problem}")
    return worker_id


UNIQUE_KEY_MAX_CHARS = 200
"""contract K4: the longest unique key, in characters (as a queue name)."""


def validate_unique_key(unique_key: object) -> str:
    """contract K4: a str of 1 to 200 characters, UTF-8 encodable and without NUL, like a worker id."""
    if not isinstance(unique_key, str) or not unique_key:
        raise InvalidArgument(f"unique_key={describe_value(unique_key)}: a unique key must be a non-empty str")
    if len(unique_key) > UNIQUE_KEY_MAX_CHARS:
        raise InvalidArgument(
            f"unique_key={describe_value(unique_key)}: a unique key is at most {UNIQUE_KEY_MAX_CHARS} characters "
            f"(this one has {len(unique_key)})"
        )
    problem = _text_problem(unique_key)
    if problem:
        raise InvalidArgument(f"unique_key={describe_value(unique_key)}: a unique key {problem}")
    return unique_key


def duration_seconds(arg: str, value: object, *, positive: bool = False) -> float:
    """A duration as float seconds: int, float or ``timedelta``; finite; 0 … 100 years.

    With ``positive`` (a lease: visibility timeout, heartbeat ``extend``) it must
    be at least 1 µs: a shorter one rounds, at microsecond precision, to a lease
    that ends the instant it starts.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | timedelta):
        raise InvalidArgument(f"{arg}={describe_value(value)}: a duration must be int or float seconds, or a timedelta")
    if isinstance(value, int) and abs(value) > MAX_DURATION_S:
        # Judged as an int: float() of an int beyond a float's range (~1.8e308) raises OverflowError.
        rule = _NEGATIVE_DURATION if value < 0 else _TOO_LONG_DURATION
        raise InvalidArgument(f"{arg}={describe_value(value)}: {rule}")
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if not math.isfinite(seconds):
        raise InvalidArgument(f"{arg}={describe_value(value)}: a duration must be finite")
    if positive and seconds < MIN_POSITIVE_DURATION_S:
        raise InvalidArgument(
            f"{arg}={describe_value(value)}: must be greater than 0 seconds, and at least 1 microsecond "
            f"({MIN_POSITIVE_DURATION_S} s), so the lease it sets does not end at once"
        )
    if seconds < 0:
        raise InvalidArgument(f"{arg}={describe_value(value)}: {_NEGATIVE_DURATION}")
    if seconds > MAX_DURATION_S:
        raise InvalidArgument(f"{arg}={describe_value(value)}: {_TOO_LONG_DURATION}")
    return seconds


def optional_duration_seconds(arg: str, value: object, *, positive: bool = False) -> float | None:
    """``None`` passes through; anything else must be a valid duration."""
    return None if value is None else duration_seconds(arg, value, positive=positive)


def validate_instant(arg: str, value: object) -> datetime:
    """A timezone-aware ``datetime``, returned in UTC (contract E9: naive datetimes are refused).

    Its UTC equivalent must itself be a ``datetime``: ``datetime(1, 1, 1,
    tzinfo=UTC+5)`` is a valid aware datetime whose UTC instant lies before
    year 1, which ``astimezone`` reports as ``OverflowError``.
    """
    if not isinstance(value, datetime):
        raise InvalidArgument(f"{arg}={describe_value(value)}: must be a timezone-aware datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument(f"{arg}={describe_value(value)}: a naive datetime is ambiguous; give it a timezone")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidArgument(
            f"{arg}={describe_value(value)}: the UTC equivalent of {value.isoformat()} must lie within "
            f"datetime's range ({datetime.min.isoformat()} to {datetime.max.isoformat()} UTC)"
        ) from None


def validate_max_attempts(arg: str, value: object) -> int:
    """An int (not bool) in [1, 2**31 - 1]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{arg}={describe_value(value)}: must be an int")
    if not 1 <= value <= INT32_MAX:
        raise InvalidArgument(f"{arg}={describe_value(value)}: must be between 1 and {INT32_MAX}")
    return value


def validate_priority(value: object) -> int:
    """contract E7: an int (not bool) that fits a signed 64-bit column."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"priority={describe_value(value)}: must be an int")
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidArgument(f"priority={describe_value(value)}: must be between {INT64_MIN} and {INT64_MAX}")
    return value


def validate_batch_size(value: object) -> int:
    """contract C5: ``n`` of ``claim_batch`` is an int (≤ 0 means "claim nothing")."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"n={describe_value(value)}: the batch size must be an int")
    return value


def validate_job_id(job_id: object) -> int | str:
    """An id as ``enqueue`` returns them: an int (not bool) or a str."""
    if isinstance(job_id, bool) or not isinstance(job_id, int | str):
        raise InvalidArgument(f"job_id={describe_value(job_id)}: a job id is an int or a str, as enqueue returned it")
    return job_id


def validate_job_ids(ids: object) -> list[int | str]:
    """contract B1: a list, tuple or set of job ids, each as ``validate_job_id`` demands.

    An ``ack_batch`` of a hundred ids checks a hundred, so an id whose type is
    exactly ``int`` or ``str`` (what engines hand out) passes without the call;
    anything else goes through ``validate_job_id``, which accepts or refuses it.
    """
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise InvalidArgument(f"ids={describe_value(ids)}: must be a list of job ids")
    checked: list[int | str] = list(ids)
    for job_id in checked:
        if type(job_id) is not int and type(job_id) is not str:
            validate_job_id(job_id)
    return checked


class _Refused(Exception):
    """A payload value is refused; raised inside the walk, turned into ``PayloadError`` by ``encode_payload``.

    The message is ``payload`` + the path to the value + ``rest``. The walk
    builds the path only as it unwinds (``where``, innermost step first), so a
    payload that passes, the common case, formats no path at all.
    """

    def __init__(self, rest: str) -> None:
        super().__init__(rest)
        self.rest = rest
        self.where: list[str] = []


def _walk_json_value(value: object, depth: int) -> None:
    """Raise ``_Refused`` for the first part of ``value`` that is not a JSON value reading back equal.

    Values and keys are shown through the base types' own ``repr``
    (``float.__repr__``, ``str.__repr__``) or ``describe_value``, so a subclass
    with a hostile ``__repr__`` cannot turn the refusal into another error.
    """
    if depth > MAX_PAYLOAD_DEPTH:
        raise _Refused(f": nested deeper than {MAX_PAYLOAD_DEPTH} levels")
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, int):
        if abs(value) >= _SMALLEST_TOO_LONG_INT:
            raise _Refused(
                f"={describe_value(value)}: an int has at most {MAX_PAYLOAD_INT_DIGITS} digits, Python's int/str "
                "conversion limit; a longer one cannot be written as JSON text and read back"
            )
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(f"={float.__repr__(value)}: NaN and infinity are not JSON values")
        return
    if isinstance(value, list | dict):
        keyed = isinstance(value, dict)
        for step, item in value.items() if isinstance(value, dict) else enumerate(value):
            if keyed and not isinstance(step, str):
                raise _Refused(f": object key {describe_value(step)} is not a str (JSON keys are strings)")
            try:
                _walk_json_value(item, depth + 1)
            except _Refused as refused:
                refused.where.append(f"[{str.__repr__(step)}]" if keyed else f"[{step}]")
                raise
        return
    raise _Refused(
        f"={describe_value(value)}: a {type(value).__name__} is not a JSON value "
        "(use dict, list, str, int, finite float, bool or None)"
    )


_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
"""One encoder for every payload: ``json.dumps`` with options builds a new one per call (about 1 µs)."""
_DECODER = json.JSONDecoder()


def encode_payload(payload: object) -> str:
    """contract E8: the payload as JSON text that decodes equal, or ``PayloadError``.

    Tuples, sets, bytes, non-str keys and non-finite floats are refused rather
    than converted, because they would not read back equal; so is an int of
    more than ``MAX_PAYLOAD_INT_DIGITS`` digits, which JSON text cannot carry
    through Python's int/str conversion. ``ensure_ascii`` escapes lone
    surrogates and NUL, so every engine can store the text.
    """
    try:
        _walk_json_value(payload, 0)
    except _Refused as refused:
        raise PayloadError(f"payload{''.join(reversed(refused.where))}{refused.rest}") from None
    return _ENCODER.encode(payload)


def decode_payload(text: str) -> object:
    """The inverse of ``encode_payload``.

    Every claimed job decodes its payload, so the text ``encode_payload``
    writes (compact, nothing around the value) takes ``raw_decode``, a third
    of ``json.loads``'s cost on a small payload; any other text (leading or
    trailing whitespace, as a database may hand back) goes through
    ``json.loads``, which also reports what is wrong with text that is not JSON.
    """
    try:
        value, end = _DECODER.raw_decode(text)
    except ValueError:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def validate_error(error: object) -> str | None:
    """The ``error`` of ``retry``/``fail``: ``None`` or a str, UTF-8 encodable and without NUL (as a worker id)."""
    if error is None:
        return None
    if not isinstance(error, str):
        raise InvalidArgument(f"error={describe_value(error)}: must be a str or None")
    problem = _text_problem(error)
    if problem:
        raise InvalidArgument(f"error={describe_value(error)}: {problem}")
    return error
