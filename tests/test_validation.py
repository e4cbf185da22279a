"""Unit tests of the contract's input rules (``alkstore_contract.validation``, ``validate_queue_opts``).

Each refusal must raise the contract's error, and its message must name the
argument, show the value and state the rule; reporting a value must never
fail, however hostile the value. The engines' behaviour on the same inputs is
checked by ``tests/test_hostile_input.py`` and the conformance suite.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError
from alkstore_contract.types import QueueOpts, validate_queue_opts
from alkstore_contract.validation import (
    MAX_PAYLOAD_INT_DIGITS,
    MIN_POSITIVE_DURATION_S,
    decode_payload,
    describe_value,
    duration_seconds,
    encode_payload,
    validate_error,
    validate_instant,
    validate_max_attempts,
    validate_priority,
    validate_worker_id,
)

HUGE = 10**MAX_PAYLOAD_INT_DIGITS
"""The smallest int of 4301 digits: one beyond CPython's default int/str conversion limit."""
PLUS_5 = timezone(timedelta(hours=5))
MINUS_5 = timezone(timedelta(hours=-5))


def message_of(excinfo: pytest.ExceptionInfo[Exception]) -> str:
    return str(excinfo.value)


def assert_names(message: str, *fragments: str) -> None:
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} is not in the message {message!r}"


# --- describe_value: shows what it can, never raises ----------------------------------------------------


class ReprFails:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (HUGE, "<int of 4301 digits>"),
        (-(10**5000), "<negative int of 5001 digits>"),
        (HUGE - 1, "<int of 4300 digits>"),
        (2**257, "<int of 78 digits>"),
        (10**77, repr(10**77)),
        (10**78, "<int of 79 digits>"),
        (2**63, repr(2**63)),
        (-(2**63) - 1, repr(-(2**63) - 1)),
        (True, "True"),
        ("a\x00b", repr("a\x00b")),
        ({"max_attempts": HUGE}, "<dict that cannot be shown>"),
        ([1, [HUGE]], "<list that cannot be shown>"),
        (ReprFails(), "<ReprFails that cannot be shown>"),
    ],
    ids=describe_value,
)
def test_describe_value(value: object, shown: str) -> None:
    assert describe_value(value) == shown


def test_describe_value_does_not_convert_a_huge_int_to_text() -> None:
    """An int far beyond the limit is described from its bit length, whether the limit is lifted or not."""
    enormous = 7 * 10**200_000
    assert describe_value(enormous) == "<int of 200001 digits>"
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert describe_value(-enormous) == "<negative int of 200001 digits>"
    finally:
        sys.set_int_max_str_digits(previous)


def test_describe_value_cuts_long_reprs() -> None:
    shown = describe_value("x" * 1000)
    assert len(shown) == 80
    assert shown.endswith("...")


# --- instants: the UTC equivalent must exist -------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        datetime(1, 1, 1, tzinfo=PLUS_5),
        datetime.max.replace(tzinfo=MINUS_5),
        datetime(9999, 12, 31, 23, tzinfo=MINUS_5),
    ],
)
def test_instant_whose_utc_equivalent_is_beyond_datetime(value: datetime) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        validate_instant("run_at", value)
    assert_names(message_of(excinfo), "run_at=datetime.datetime(", value.isoformat(), "UTC equivalent", "range")


@pytest.mark.parametrize(
    "value",
    [datetime(1, 1, 1, 5, tzinfo=PLUS_5), datetime.max.replace(tzinfo=UTC), datetime(1, 1, 1, tzinfo=MINUS_5)],
)
def test_instant_at_the_edge_of_the_range_is_kept(value: datetime) -> None:
    converted = validate_instant("run_at", value)
    assert converted == value
    assert converted.tzinfo is UTC


# --- durations: beyond a float, and the 1 µs minimum of a lease ------------------------------------------


@pytest.mark.parametrize(
    ("value", "rule"),
    [(10**400, "at most"), (-(10**400), "must not be negative"), (HUGE, "at most")],
    ids=describe_value,
)
def test_duration_beyond_a_float(value: int, rule: str) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        duration_seconds("delay", value)
    assert_names(message_of(excinfo), "delay=", describe_value(value), rule)


def test_duration_beyond_a_float_in_queue_opts() -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        QueueOpts(visibility_timeout_s=10**400)
    assert_names(message_of(excinfo), "visibility_timeout_s=", "<int of 401 digits>", "100 years")


@pytest.mark.parametrize("value", [4e-7, 9.999e-7, 5e-324, 0, 0.0, -0.0, timedelta(0), -1])
def test_positive_duration_under_one_microsecond(value: object) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        duration_seconds("extend", value, positive=True)
    assert_names(message_of(excinfo), "extend=", repr(value), "at least 1 microsecond")


@pytest.mark.parametrize("value", [1e-6, timedelta(microseconds=1), 1.5e-6, 1])
def test_positive_duration_of_one_microsecond_or_more(value: object) -> None:
    seconds = duration_seconds("extend", value, positive=True)
    assert seconds >= MIN_POSITIVE_DURATION_S
    assert timedelta(seconds=seconds) >= timedelta(microseconds=1)


def test_queue_opts_visibility_timeout_under_one_microsecond() -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        QueueOpts(visibility_timeout_s=4e-7)
    assert_names(message_of(excinfo), "visibility_timeout_s=", "4e-07", "at least 1 microsecond")
    assert QueueOpts(visibility_timeout_s=timedelta(microseconds=1)).visibility_timeout_s == 1e-6


@pytest.mark.parametrize("value", [4e-7, 0.0])
def test_non_lease_durations_may_be_shorter_than_a_microsecond(value: float) -> None:
    assert duration_seconds("delay", value) == value


# --- ints of more than 4300 digits ------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [HUGE, -HUGE, [1, {"deep": HUGE}], {"k": [HUGE]}], ids=describe_value)
def test_payload_int_beyond_the_str_conversion_limit(payload: object) -> None:
    with pytest.raises(PayloadError) as excinfo:
        encode_payload(payload)
    assert_names(message_of(excinfo), "payload", "<", "int of 4301 digits>", "at most 4300 digits", "JSON text")


def test_payload_path_names_where_the_huge_int_is() -> None:
    with pytest.raises(PayloadError) as excinfo:
        encode_payload([1, {"deep": HUGE}])
    assert_names(message_of(excinfo), "payload[1]['deep']=<int of 4301 digits>")


@pytest.mark.parametrize("payload", [HUGE - 1, -(HUGE - 1)], ids=describe_value)
def test_payload_int_of_4300_digits_round_trips(payload: int) -> None:
    assert decode_payload(encode_payload(payload)) == payload


@pytest.mark.parametrize("value", [HUGE, -HUGE], ids=describe_value)
def test_huge_priority(value: int) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        validate_priority(value)
    assert_names(message_of(excinfo), f"priority={describe_value(value)}", "must be between")


@pytest.mark.parametrize("value", [HUGE, -HUGE], ids=describe_value)
def test_huge_max_attempts(value: int) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        validate_max_attempts("max_attempts", value)
    assert_names(message_of(excinfo), f"max_attempts={describe_value(value)}", "must be between")


# --- validate_queue_opts -------------------------------------------------------------------------------------


def test_queue_opts_none_is_the_defaults() -> None:
    assert validate_queue_opts(None) == QueueOpts()


def test_queue_opts_are_returned_as_given() -> None:
    opts = QueueOpts(max_attempts=7)
    assert validate_queue_opts(opts) is opts


@pytest.mark.parametrize(
    ("opts", "shown"),
    [
        ({"max_attempts": 3}, "{'max_attempts': 3}"),
        ("x", "'x'"),
        (300, "300"),
        ({"max_attempts": HUGE}, "<dict that cannot be shown>"),
        (HUGE, "<int of 4301 digits>"),
        (ReprFails(), "<ReprFails that cannot be shown>"),
    ],
    ids=describe_value,
)
def test_queue_opts_of_the_wrong_type(opts: object, shown: str) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        validate_queue_opts(opts)
    assert_names(message_of(excinfo), f"opts={shown}", "must be a QueueOpts or None")


# --- NUL in a worker id or an error ----------------------------------------------------------------------------


@pytest.mark.parametrize("worker", ["\x00", "a\x00b", "w\x00"])
def test_worker_id_with_nul(worker: str) -> None:
    with pytest.raises(InvalidName) as excinfo:
        validate_worker_id(worker)
    assert_names(message_of(excinfo), "worker_id=", repr(worker), "must not contain NUL")


@pytest.mark.parametrize("error", ["\x00", "boom\x00", "a\x00\ud800"])
def test_error_with_nul(error: str) -> None:
    with pytest.raises(InvalidArgument) as excinfo:
        validate_error(error)
    assert_names(message_of(excinfo), "error=", repr(error), "must not contain NUL")


@pytest.mark.parametrize("text", ["w", "\\x00", "\x01\x1f\x7f", "\u202eRTL", "📬"])
def test_other_text_is_accepted(text: str) -> None:
    assert validate_worker_id(text) == text
    assert validate_error(text) == text


def test_nul_stays_valid_in_payload_strings() -> None:
    payload = {"a\x00": "b\x00"}
    text = encode_payload(payload)
    assert "\x00" not in text
    assert json.loads(text) == payload
