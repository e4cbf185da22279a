"""The wire codec sends what JSON can carry and refuses only what it cannot (docs/wire-protocol.md, "Argument checks").

Rule ids: E8 (a payload nested 501 levels or holding a 4301-digit int is sent as JSON text, for the wire
engine to refuse), E9 (a ``run_at`` whose UTC equivalent lies outside years 1 … 9999 is sent as epoch
microseconds), S2 (``unchecked_queue_opts`` builds the options a ``QueueOpts`` refuses, for a wire
engine only). Values with no JSON form stay the suite's to refuse, with the contract's error.
"""

from __future__ import annotations

import json
import math
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

from alkstore_contract.errors import InvalidArgument, PayloadError
from alkstore_contract.suite.rows.validation_and_closed_store import unchecked_queue_opts
from alkstore_contract.types import QueueOpts
from alkstore_contract.wire import codec


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_a_payload_past_the_in_process_bounds_is_written_as_json_text() -> None:
    deep = _nested(501)
    assert json.loads(codec.payload_text(deep)) == deep
    huge = -(10**4300) - 7
    text = codec.payload_text({"n": huge, "f": 1.5, "s": "é\x00", "b": True, "z": None})
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert json.loads(text) == {"n": huge, "f": 1.5, "s": "é\x00", "b": True, "z": None}
    finally:
        sys.set_int_max_str_digits(previous)


@pytest.mark.parametrize("payload", [(1, 2), {1: "int key"}, math.nan, [math.inf], {"set": {1}}, b"bytes"])
def test_a_payload_with_no_json_form_is_refused_by_the_suite(payload: object) -> None:
    with pytest.raises(PayloadError, match="payload"):
        codec.payload_text(payload)


def test_an_instant_outside_datetimes_utc_range_is_sent_as_epoch_microseconds() -> None:
    before_year_1 = datetime.min.replace(tzinfo=timezone(timedelta(microseconds=1)))
    after_year_9999 = datetime.max.replace(tzinfo=timezone(timedelta(microseconds=-1)))
    assert codec.instant(before_year_1) == "-62135596800000001"
    assert codec.instant(after_year_9999) == "253402300800000000"
    assert codec.instant(datetime(2030, 1, 1, tzinfo=UTC)) == "1893456000000000"
    with pytest.raises(InvalidArgument, match="run_at"):
        codec.instant(datetime(2030, 1, 1))


def test_unchecked_queue_opts_carries_one_bad_option_and_the_defaults() -> None:
    opts = unchecked_queue_opts("visibility_timeout_s", 0)
    defaults = QueueOpts()
    assert codec.queue_opts(opts) == {
        "visibility_timeout_s": 0,
        "max_attempts": defaults.max_attempts,
        "backoff_base_s": defaults.backoff_base_s,
        "dead_letter_retention_s": None,
    }
    with pytest.raises(InvalidArgument, match="visibility_timeout_s"):
        QueueOpts(visibility_timeout_s=0)


def test_a_wire_engine_gets_the_rows_wire_hint_and_a_python_engine_the_python_one() -> None:
    """Verdict text: a row's "For a wire engine, check" paragraph is a wire engine's hint, and only its."""
    from alkstore_contract.suite.row import all_rows

    (row,) = [r for r in all_rows() if r.name == "enqueue_opts_resolution"]
    assert row.hint.startswith("When it fails, check")
    assert "resolve_new_jobs" in row.hint
    assert "For a wire engine" not in row.hint
    wire = row.hint_for(wire=True)
    assert wire.startswith("For a wire engine, check")
    assert "resolve_new_jobs" not in wire
    (other,) = [r for r in all_rows() if r.name == "claim_extents"]
    assert other.hint_for(wire=True).startswith(other.hint)
    assert "A wire engine:" in other.hint_for(wire=True)
