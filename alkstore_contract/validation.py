"""Input rules of SPEC S1, S2, C6, E8, E9, written once for every engine.

Each check raises the contract's error with a message that names the argument,
shows the value and states the rule, and returns the normalised value so an
engine stores exactly what was checked. Engines call these before any I/O, so
bad input never stores anything.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TypeAlias

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError

Duration: TypeAlias = int | float | timedelta
JobId: TypeAlias = int | str

MAX_QUEUE_NAME_LENGTH = 200
RESERVED_PREFIX = "__"
MAX_DURATION_S = 100 * 365.25 * 24 * 3600
"""Upper bound of every duration (100 years): keeps ``now + d`` inside ``datetime``'s range."""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
MAX_PAYLOAD_DEPTH = 500


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _utf8_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must be encodable as UTF-8 (no lone surrogates)"
    return None


def validate_queue_name(name: object) -> str:
    """SPEC S1: a non-empty str of at most 200 characters, no control characters, not ``__…``."""
    if not isinstance(name, str):
        raise InvalidName(f"name={_show(name)}: a queue name must be a str")
    if not name:
        raise InvalidName("name='': a queue name must not be empty")
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise InvalidName(
            f"name={_show(name)}: a queue name has at most {MAX_QUEUE_NAME_LENGTH} characters, got {len(name)}"
        )
    if name.startswith(RESERVED_PREFIX):
        raise InvalidName(f"name={_show(name)}: the prefix {RESERVED_PREFIX!r} is reserved")
    for ch in name:
        if unicodedata.category(ch) == "Cc":
            raise InvalidName(f"name={_show(name)}: a queue name must not contain control characters ({ch!r})")
    problem = _utf8_problem(name)
    if problem:
        raise InvalidName(f"name={_show(name)}: a queue name {problem}")
    return name


def validate_worker_id(worker_id: object) -> str:
    """SPEC C6: a non-empty str (UTF-8 encodable, so every engine can store it)."""
    if not isinstance(worker_id, str) or not worker_id:
        raise InvalidName(f"worker_id={_show(worker_id)}: a worker id must be a non-empty str")
    problem = _utf8_problem(worker_id)
    if problem:
        raise InvalidName(f"worker_id={_show(worker_id)}: a worker id {problem}")
    return worker_id


def duration_seconds(arg: str, value: object, *, positive: bool = False) -> float:
    """A duration as float seconds: int, float or ``timedelta``; finite; ≥ 0 (> 0 if ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | timedelta):
        raise InvalidArgument(f"{arg}={_show(value)}: a duration must be int or float seconds, or a timedelta")
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if not math.isfinite(seconds):
        raise InvalidArgument(f"{arg}={_show(value)}: a duration must be finite")
    if positive and seconds <= 0:
        raise InvalidArgument(f"{arg}={_show(value)}: must be greater than 0 seconds")
    if seconds < 0:
        raise InvalidArgument(f"{arg}={_show(value)}: a duration must not be negative")
    if seconds > MAX_DURATION_S:
        raise InvalidArgument(f"{arg}={_show(value)}: a duration must be at most {MAX_DURATION_S:.0f} s (100 years)")
    return seconds


def optional_duration_seconds(arg: str, value: object, *, positive: bool = False) -> float | None:
    """``None`` passes through; anything else must be a valid duration."""
    return None if value is None else duration_seconds(arg, value, positive=positive)


def validate_instant(arg: str, value: object) -> datetime:
    """A timezone-aware ``datetime``, returned in UTC (SPEC E9: naive datetimes are refused)."""
    if not isinstance(value, datetime):
        raise InvalidArgument(f"{arg}={_show(value)}: must be a timezone-aware datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument(f"{arg}={_show(value)}: a naive datetime is ambiguous; give it a timezone")
    return value.astimezone(UTC)


def validate_max_attempts(arg: str, value: object) -> int:
    """An int (not bool) in [1, 2**31 - 1]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{arg}={_show(value)}: must be an int")
    if not 1 <= value <= INT32_MAX:
        raise InvalidArgument(f"{arg}={_show(value)}: must be between 1 and {INT32_MAX}")
    return value


def validate_priority(value: object) -> int:
    """SPEC E7: an int (not bool) that fits a signed 64-bit column."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"priority={_show(value)}: must be an int")
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidArgument(f"priority={_show(value)}: must be between {INT64_MIN} and {INT64_MAX}")
    return value


def validate_batch_size(value: object) -> int:
    """SPEC C5: ``n`` of ``claim_batch`` is an int (≤ 0 means "claim nothing")."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"n={_show(value)}: the batch size must be an int")
    return value


def validate_job_id(job_id: object) -> JobId:
    """An id as ``enqueue`` returns them: an int (not bool) or a str."""
    if isinstance(job_id, bool) or not isinstance(job_id, int | str):
        raise InvalidArgument(f"job_id={_show(job_id)}: a job id is an int or a str, as enqueue returned it")
    return job_id


def validate_job_ids(ids: object) -> list[JobId]:
    """SPEC B1: a list, tuple or set of job ids, each as ``validate_job_id`` demands."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise InvalidArgument(f"ids={_show(ids)}: must be a list of job ids")
    return [validate_job_id(job_id) for job_id in ids]


def _check_json_value(value: object, depth: int, path: str) -> None:
    if depth > MAX_PAYLOAD_DEPTH:
        raise PayloadError(f"payload{path}: nested deeper than {MAX_PAYLOAD_DEPTH} levels")
    if value is None or isinstance(value, bool | str | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PayloadError(f"payload{path}={value!r}: NaN and infinity are not JSON values")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_value(item, depth + 1, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise PayloadError(f"payload{path}: object key {_show(key)} is not a str (JSON keys are strings)")
            _check_json_value(item, depth + 1, f"{path}[{key!r}]")
        return
    raise PayloadError(
        f"payload{path}={_show(value)}: a {type(value).__name__} is not a JSON value "
        "(use dict, list, str, int, finite float, bool or None)"
    )


def encode_payload(payload: object) -> str:
    """SPEC E8: the payload as JSON text that decodes equal, or ``PayloadError``.

    Tuples, sets, bytes, non-str keys and non-finite floats are refused rather
    than converted, because they would not read back equal. ``ensure_ascii``
    escapes lone surrogates and NUL, so every engine can store the text.
    """
    _check_json_value(payload, 0, "")
    return json.dumps(payload, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def decode_payload(text: str) -> object:
    """The inverse of ``encode_payload``."""
    return json.loads(text)


def validate_error(error: object) -> str | None:
    """The ``error`` of ``retry``/``fail``: ``None`` or a UTF-8 encodable str."""
    if error is None:
        return None
    if not isinstance(error, str):
        raise InvalidArgument(f"error={_show(error)}: must be a str or None")
    problem = _utf8_problem(error)
    if problem:
        raise InvalidArgument(f"error={_show(error)}: {problem}")
    return error
