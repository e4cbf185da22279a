"""Python values to the protocol's encodings and back (docs/wire-protocol.md, "Encodings").

Part of the wire.

The checks here are the ones a message cannot carry: a Python type with no
JSON form (a ``bool`` given as a duration, a naive ``datetime``, a tuple
payload, a NaN, a lone surrogate). They raise the contract's error with the
message the in-process engines give, and send nothing. Every value that can be
encoded goes to the engine to be judged: its range, its length, its rules; a
payload nested deeper than 500 levels or holding an int of more than 4300
digits included (``payload_text``), which the in-process engines' encoder
refuses but JSON text can carry.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError
from alkstore_contract.instants import from_epoch_us, to_epoch_us
from alkstore_contract.types import EnqueueCall, Job, JobId, JobState, QueueOpts
from alkstore_contract.validation import (
    decode_payload,
    describe_value,
    encode_payload,
    validate_instant,
    validate_job_id,
    validate_job_ids,
)


def _utf8(arg: str, value: str, error: type[Exception]) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{arg}={describe_value(value)}: must be encodable as UTF-8 (no lone surrogates)") from None
    return value


def name(value: object) -> str:
    """A queue name: a str the wire can carry (S1's other rules are the engine's)."""
    if not isinstance(value, str):
        raise InvalidName(f"name={describe_value(value)}: a queue name must be a str")
    return _utf8("name", value, InvalidName)


def worker_id(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidName(f"worker_id={describe_value(value)}: a worker id must be a non-empty str")
    return _utf8("worker_id", value, InvalidName)


def unique_key(value: object) -> str:
    """A unique key: a str the wire can carry (K4's other rules are the engine's)."""
    if not isinstance(value, str):
        raise InvalidArgument(f"unique_key={describe_value(value)}: a unique key must be a non-empty str")
    return _utf8("unique_key", value, InvalidArgument)


def error_text(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"error={describe_value(value)}: must be a str or None")
    return _utf8("error", value, InvalidArgument)


def duration(arg: str, value: object) -> int | float | None:
    """``None``, or seconds as a JSON number: an int stays an int, a ``timedelta`` becomes float seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | timedelta):
        raise InvalidArgument(f"{arg}={describe_value(value)}: a duration must be int or float seconds, or a timedelta")
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if isinstance(seconds, float) and not math.isfinite(seconds):
        raise InvalidArgument(f"{arg}={describe_value(value)}: a duration must be finite")
    return seconds


def integer(arg: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{arg}={describe_value(value)}: must be an int")
    return value


def instant(value: object, arg: str = "run_at") -> str | None:
    """An aware ``datetime`` as epoch microseconds; one whose UTC equivalent lies outside year 1 … 9999 is sent.

    Such an instant has an encoding (``datetime(1, 1, 1, tzinfo=UTC+5)`` is
    -62135614800000000 µs) though Python cannot convert it to UTC, so the engine
    judges it (E9, ``DEC-huge-values``); a naive or non-``datetime`` value has none.
    """
    if value is None:
        return None
    try:
        return str(to_epoch_us(validate_instant(arg, value)))
    except InvalidArgument:
        if isinstance(value, datetime) and value.utcoffset() is not None:
            return str(to_epoch_us(value))
        raise


def enqueue_options(call: EnqueueCall) -> dict[str, Any]:
    return {
        "delay_s": duration("delay", call.delay),
        "run_at": instant(call.run_at),
        "expires_s": duration("expires", call.expires),
        "max_attempts": None if call.max_attempts is None else integer("max_attempts", call.max_attempts),
        "priority": str(integer("priority", call.priority)),
    }


_INT_CHUNK_DIGITS = 1000
_INT_CHUNK = 10**_INT_CHUNK_DIGITS


class _NoJsonForm(Exception):
    """A part of a payload that JSON text cannot carry at all."""


def _int_text(value: int) -> str:
    """``value`` in decimal, past Python's 4300-digit int/str limit too (converted 1000 digits at a time)."""
    magnitude, chunks = abs(value), []
    while magnitude >= _INT_CHUNK:
        magnitude, low = divmod(magnitude, _INT_CHUNK)
        chunks.append(f"{low:0{_INT_CHUNK_DIGITS}d}")
    chunks.append(str(magnitude))
    return ("-" if value < 0 else "") + "".join(reversed(chunks))


def _json_text(value: object, out: list[str]) -> None:
    """Append ``value`` as compact JSON text to ``out``, with no bound on nesting or digits; ``_NoJsonForm`` else.

    One frame per level (no generator in between), so 501 levels stay well within Python's recursion limit.
    """
    if value is None or isinstance(value, bool) or type(value) is str:
        out.append(json.dumps(value))
    elif type(value) is int:
        out.append(_int_text(value))
    elif type(value) is float and math.isfinite(value):
        out.append(float.__repr__(value))
    elif type(value) is list:
        out.append("[")
        for index, item in enumerate(value):
            out.append("," if index else "")
            _json_text(item, out)
        out.append("]")
    elif type(value) is dict:
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                raise _NoJsonForm
            out.append(("," if index else "") + json.dumps(key) + ":")
            _json_text(item, out)
        out.append("}")
    else:
        raise _NoJsonForm


def payload_text(value: object) -> str:
    """A payload's JSON text; only a value with no JSON form is refused here (E8).

    The in-process engines' ``encode_payload`` also refuses nesting past 500
    levels and ints past 4300 digits; JSON text carries both, so they are sent
    for the wire engine to refuse (docs/wire-protocol.md, "Argument checks").
    """
    try:
        return encode_payload(value)
    except PayloadError as refused:
        out: list[str] = []
        try:
            _json_text(value, out)
        except (_NoJsonForm, RecursionError):
            raise refused from None
        return "".join(out)


def payloads(values: object) -> list[str]:
    if not isinstance(values, list | tuple):
        raise InvalidArgument(f"payloads={describe_value(values)}: must be a list or tuple of payloads")
    return [payload_text(value) for value in values]


def job_id(value: object) -> JobId:
    return validate_job_id(value)


def job_ids(values: object) -> list[JobId]:
    return validate_job_ids(values)


def queue_opts(opts: QueueOpts) -> dict[str, Any]:
    return {
        "visibility_timeout_s": opts.visibility_timeout_s,
        "max_attempts": opts.max_attempts,
        "backoff_base_s": opts.backoff_base_s,
        "dead_letter_retention_s": opts.dead_letter_retention_s,
    }


def _instant_or_none(value: str | None) -> Any:
    return None if value is None else from_epoch_us(int(value))


def _seconds_or_none(value: float | None) -> float | None:
    return None if value is None else float(value)


def job(data: dict[str, Any]) -> Job:
    """A snapshot the schema accepted, as the contract's ``Job``."""
    return Job(
        data["id"],
        data["queue"],
        decode_payload(data["payload"]),
        JobState(data["state"]),
        int(data["priority"]),
        data["attempts"],
        data["max_attempts"],
        from_epoch_us(int(data["run_at"])),
        _instant_or_none(data["expires_at"]),
        from_epoch_us(int(data["enqueued_at"])),
        _instant_or_none(data["lease_expires_at"]),
        data["claimed_by"],
        float(data["visibility_timeout_s"]),
        float(data["backoff_base_s"]),
        _seconds_or_none(data["dead_letter_retention_s"]),
        data["last_error"],
        _instant_or_none(data["died_at"]),
    )
