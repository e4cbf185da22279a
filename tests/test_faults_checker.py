"""The runtime-faults checker and ledger on hand-made runs: each outcome of docs/runtime-faults.md, and none
where a run is clean (a checker that cannot say "no" is as useless as one that cannot say "yes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alkstore_faults.checker import STALE, FaultEvent, Job, Library, check, distribution
from alkstore_faults.fault_report import broken_promises, unjudged_promises
from alkstore_faults.handler_records import Run, read_ledgers, runs_of
from alkstore_faults.promises import judged, normalised
from alkstore_faults.runner_program import parse_description
from alkstore_faults.scenario import FaultRun

JOBS = [Job("a", 1.0), Job("b", 1.0)]


def _run(job: str, worker: str, start: float, end: float | None, ok: bool | None = True) -> Run:
    return Run(job, worker, 100 + int(worker[1:]), None, start, start, end, ok if end is not None else None)


def test_a_clean_run_has_no_findings() -> None:
    verdict = check(JOBS, [_run("a", "w1", 0, 1), _run("b", "w2", 0, 1)], [], {}, 10)
    assert verdict.findings == []


def test_a_job_that_never_ended_ok_is_unread_without_inspect_and_a_failing_one_is_nothing() -> None:
    jobs = [Job("a", 1.0), Job("b", 1.0, fail=True)]
    verdict = check(jobs, [_run("a", "w1", 0, None), _run("b", "w2", 0, 1, ok=False)], [], {"w1": 0.5}, 10)
    assert [(f.outcome, f.job) for f in verdict.findings] == [("unread", "a")]
    assert "final state not read: the runner has no inspect (protocol 1)" in verdict.findings[0].detail


WALL_END = 1_000_000.0
POLICY = {"state": "failed", "reason": "TimeoutError", "setting": "job_timeout", "quote": "q", "doc": "D"}
RULE = {"state": "running", "after_s": 14400, "rule": "unlocked after 4 hours", "quote": "q", "doc": "D"}


def _state(state: str, until: float | None = None, reason: str | None = None) -> dict[str, object]:
    return {"job": "a", "state": state, "library_state": state.upper(), "reason": reason, "until": until}


@pytest.mark.parametrize(
    ("state", "rules", "outcome", "cause"),
    [
        (_state("absent"), [], "lost", None),
        (_state("completed"), [], "lost", None),
        (_state("running"), [], "lost", None),
        (_state("running", WALL_END + 60), [], "lost", None),
        (_state("running", WALL_END + 14000), [RULE], "recovers_later", "documented to recover after 4 h"),
        (_state("running"), [RULE], "lost", None),  # held forever: the rule does not cover this hold (saq's orphan)
        (_state("running", WALL_END - 1), [RULE], "still_queued", None),
        (_state("scheduled", WALL_END - 1), [], "still_queued", None),
        (_state("queued"), [], "still_queued", None),
        (_state("failed", reason="arq TimeoutError"), [], "failed_by_policy", "job_timeout"),
        (_state("dead", reason="TimeoutError"), [], "failed_unexplained", "TimeoutError"),
        (_state("failed", reason="KeyError"), [], "failed_unexplained", "KeyError"),
        (_state("unknown", reason="inspect exited 1"), [], "unread", None),
    ],
    ids=lambda value: str(value)[:40],
)
def test_a_job_no_run_completed_is_classed_by_the_librarys_own_final_state(
    state: dict[str, object], rules: list[dict[str, object]], outcome: str, cause: str | None
) -> None:
    library = Library({"a": state}, [POLICY], rules, WALL_END)
    verdict = check(JOBS[:1], [_run("a", "w1", 0, None)], [], {"w1": 0.5}, 10, library)
    assert [(f.outcome, f.cause) for f in verdict.findings] == [(outcome, cause)]


def test_a_cancelled_run_ends_at_its_record_is_counted_and_is_not_a_completion(tmp_path: Path) -> None:
    lines = [
        {"ev": "start", "job": "a", "worker": "w1", "pid": 1, "attempt": 1, "mono": 1.0, "wall": 1.0},
        {
            "ev": "cancelled",
            "job": "a",
            "worker": "w1",
            "pid": 1,
            "attempt": 1,
            "mono": 2.0,
            "wall": 2.0,
            "by": "library",
            "reason": "job_timeout",
        },
        {"ev": "start", "job": "a", "worker": "w2", "pid": 2, "attempt": 2, "mono": 2.5, "wall": 2.5},
        {"ev": "end", "job": "a", "worker": "w2", "pid": 2, "attempt": 2, "mono": 3.0, "wall": 3.0, "ok": True},
    ]
    (tmp_path / "w.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    runs = runs_of(read_ledgers(tmp_path)[0])
    assert [(run.end, run.ok, run.cancelled) for run in runs] == [
        (2.0, False, "library: job_timeout"),
        (3.0, True, None),
    ]
    verdict = check(JOBS[:1], runs, [], {}, 10)
    assert [(f.outcome, f.detail) for f in verdict.findings] == [("cancelled", "cancelled by library: job_timeout")]


@pytest.mark.parametrize(
    ("pause", "outcome"),
    [((2.0, 6.0), "concurrent_stopped"), ((2.0, 3.5), "concurrent_executing"), (None, "concurrent_executing")],
    ids=["stopped all through the overlap", "resumed while the other still ran", "no pause"],
)
def test_an_overlap_is_split_by_the_harnesss_pause_log(pause: tuple[float, float] | None, outcome: str) -> None:
    """w1 runs a from 0 to 6 and is paused; w2 runs it from 3 to 5: only the overlap outside the pause is two runs
    executing at once."""
    faults = [] if pause is None else [FaultEvent("pause", pause[0], pause[1], "w1", ["a"])]
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 6), _run("a", "w2", 3, 5)], faults, {}, 10)
    assert [f.outcome for f in verdict.findings if f.outcome.startswith("concurrent")] == [outcome]


def test_a_lost_promise_is_judged_on_lost_only_and_unread_leaves_it_unjudged() -> None:
    counts = dict.fromkeys(normalised({"lost": 0, "twice": 0, "concurrent": 0, "stale": 0}), 0)
    assert judged("lost", {**counts, "failed_by_policy": 2, "recovers_later": 1}, promise=True) == (0, 0)
    assert judged("lost", {**counts, "lost": 1, "unread": 2}, promise=True) == (1, 2)
    assert judged("lost", {**counts, "lost": 1, "unread": 2}, promise=False) == (3, 0)
    split = {**counts, "concurrent": None, "concurrent_executing": 1, "concurrent_stopped": 2}
    assert judged("concurrent", split, promise=True) == (1, 0)
    assert judged("concurrent", split, promise=False) == (3, 0)


def test_a_version_1_reports_lost_reads_as_unread_and_its_concurrent_as_not_split() -> None:
    old = {"lost": 2, "twice": 0, "concurrent": 1, "stale_accepted": 0, "stale_refused": 0, "stale_unobserved": 0}
    full = normalised(old, version=1)
    assert (full["lost"], full["unread"], full["concurrent"], full["concurrent_executing"]) == (0, 2, 1, None)
    assert judged("lost", old, promise=True, version=1) == (0, 2)


def test_two_sequential_completions_are_twice_not_concurrent() -> None:
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 1), _run("a", "w2", 2, 3)], [], {}, 10)
    assert [f.outcome for f in verdict.findings] == ["twice"]


def test_overlap_with_a_late_completion_is_concurrent_stale_and_twice() -> None:
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 5), _run("a", "w2", 3, 4)], [], {}, 10)
    assert sorted(f.outcome for f in verdict.findings) == ["concurrent_executing", "stale_unobserved", "twice"]
    stale = next(f for f in verdict.findings if f.outcome == "stale_unobserved")
    assert stale.workers == ["w1", "w2"]
    assert stale.times == [3, 5]
    assert "did not see what the library did with it" in stale.detail


@pytest.mark.parametrize(
    ("accepted", "outcome", "words"),
    [
        (True, "stale_accepted", "library accepted"),
        (False, "stale_refused", "library refused"),
        (None, "stale_unobserved", "did not see"),
    ],
)
def test_a_late_completion_is_split_by_what_the_library_did_with_its_ack(
    accepted: bool | None, outcome: str, words: str
) -> None:
    late = _run("a", "w1", 0, 5)
    late.accepted = accepted
    on_time = _run("a", "w2", 3, 4)
    on_time.accepted = True
    verdict = check(JOBS[:1], [late, on_time], [], {}, 10)
    [stale] = [f for f in verdict.findings if f.outcome.startswith("stale")]
    assert (stale.outcome, stale.workers) == (outcome, ["w1", "w2"])
    assert words in stale.detail
    assert [verdict.count(name) for name in STALE] == [int(name == outcome) for name in STALE]


def _ledger(path: Path, *records: dict[str, object]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def test_an_ack_record_pairs_with_the_run_that_ended_last_before_it_in_its_process(tmp_path: Path) -> None:
    base = {"job": "a", "worker": "w1", "pid": 7, "attempt": 1, "wall": 0.0}
    _ledger(
        tmp_path / "w1.jsonl",
        {**base, "ev": "ack", "mono": 0.5, "accepted": True},  # no run ended yet: ignored
        {**base, "ev": "start", "mono": 1.0},
        {**base, "ev": "end", "mono": 2.0, "ok": True},
        {**base, "ev": "ack", "mono": 2.1, "accepted": False},
        {**base, "ev": "ack", "mono": 2.2, "accepted": True},  # that run is settled already: ignored
        {**base, "ev": "start", "mono": 3.0, "attempt": 2},
        {**base, "ev": "end", "mono": 4.0, "ok": True, "attempt": 2},
        {**base, "ev": "ack", "mono": 4.1, "pid": 8, "accepted": True},  # another process: not this run's
        {**base, "ev": "ack", "mono": 4.2, "accepted": "yes"},  # not a boolean: skipped, counted
    )
    records, skipped = read_ledgers(tmp_path)
    assert len(skipped) == 1
    assert "accepted must be true or false" in skipped[0]
    assert [(run.start, run.accepted) for run in runs_of(records)] == [(1.0, False), (3.0, None)]


def test_a_promise_about_stale_is_judged_on_accepted_and_unobserved_leaves_it_unjudged() -> None:
    counts = {"lost": 0, "twice": 1, "concurrent": 1, "stale_accepted": 1, "stale_refused": 2, "stale_unobserved": 3}
    assert judged("stale", counts, promise=True) == (1, 3)
    assert judged("stale", counts, promise=False) == (4, 0)  # a caveat: no fence claimed, unobserved was taken
    assert judged("twice", counts, promise=True) == (1, 0)
    assert judged("stale", {**counts, "stale_accepted": None, "stale_unobserved": None}, promise=True) == (None, 0)


def test_an_older_reports_stale_reads_as_unobserved() -> None:
    old = {"lost": 0, "twice": 1, "concurrent": 1, "stale": 1}
    full = normalised(old)
    assert {key: full[key] for key in ("lost", "twice", "concurrent", *STALE)} == {
        "lost": 0,
        "twice": 1,
        "concurrent": 1,
        "stale_accepted": 0,
        "stale_refused": 0,
        "stale_unobserved": 1,
    }
    assert normalised({**old, "lost": None, "stale": None})["stale_accepted"] is None
    assert judged("stale", old, promise=True) == (0, 1)


def test_a_run_of_a_killed_worker_ends_when_it_was_killed() -> None:
    runs = [_run("a", "w1", 0, None), _run("a", "w3", 2, 3)]
    assert check(JOBS[:1], runs, [], {"w1": 1.0}, 10).findings == []
    assert [f.outcome for f in check(JOBS[:1], runs, [], {"w1": 2.5}, 10).findings] == ["concurrent_executing"]


def test_recovery_delay_is_from_the_fault_to_the_next_start() -> None:
    fault = FaultEvent("kill9", 1.0, 1.0, "w1", ["a", "b"])
    verdict = check(JOBS, [_run("a", "w1", 0, None), _run("a", "w2", 3.5, 4), _run("b", "w2", 0, 0.5)], [fault], {}, 9)
    assert verdict.recovery_delays == [2.5]
    assert verdict.unrecovered == ["b"]
    assert distribution(verdict.recovery_delays) == {"n": 1, "min": 2.5, "median": 2.5, "max": 2.5}


def test_a_torn_ledger_line_is_skipped_and_counted(tmp_path: Path) -> None:
    start = {"ev": "start", "job": "a", "worker": "w1", "pid": 7, "attempt": 1, "mono": 1.0, "wall": 1.0}
    end = {**start, "ev": "end", "mono": 2.0, "ok": True}
    (tmp_path / "w1.jsonl").write_text(json.dumps(start) + "\n" + json.dumps(end) + '\n{"ev": "sta', encoding="utf-8")
    records, skipped = read_ledgers(tmp_path)
    assert len(skipped) == 1
    assert skipped[0].startswith("w1.jsonl:3:")
    [run] = runs_of(records)
    assert (run.start, run.end, run.ok) == (1.0, 2.0, True)


DESCRIPTION = {
    "library": "x",
    "version": "1",
    "settings": [],
    "lease_s": 2,
    "recovery_window_s": 5,
    "faults": ["kill9"],
    "promises": [{"outcome": "lost", "faults": ["*"], "max": 0, "quote": "no loss", "doc": "README"}],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"lease_s": 0}, "lease_s and recovery_window_s must be in (0, 600]"),
        ({"faults": ["reboot"]}, "unknown faults ['reboot']"),
        ({"promises": [{"outcome": "slow", "faults": ["*"], "max": 0, "quote": "q", "doc": "d"}]}, "got 'slow'"),
        ({"promises": [{"outcome": "lost", "faults": ["*"], "max": 0, "quote": " ", "doc": "d"}]}, "must quote"),
        ({"settings": [{"name": "x", "value": 1}]}, "the doc it comes from"),
    ],
)
def test_a_bad_description_is_refused_naming_the_rule(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_description({**DESCRIPTION, **change})


def test_a_run_that_went_on_after_the_fault_needed_no_restart() -> None:
    fault = FaultEvent("pause", 1.0, 4.0, "w1", ["a"])
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 5)], [fault], {}, 9)
    assert (verdict.recovery_delays, verdict.unrecovered) == ([], [])


def test_an_unknown_runner_ends_the_command_with_exit_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    from alkstore_faults.cli import main

    assert main(["no-such-runner"]) == 2
    assert "no runner 'no-such-runner'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("accepted", "broken", "unjudged"), [(True, [1], []), (False, [], []), (None, [], [1])], ids=str
)
def test_a_fencing_promise_is_broken_by_an_accepted_late_completion_and_unjudged_by_an_unobserved_one(
    accepted: bool | None, broken: list[int], unjudged: list[int]
) -> None:
    stale = {"outcome": "stale", "faults": ["pause"], "max": 0, "quote": "a late ack is refused", "doc": "README"}
    description = parse_description({**DESCRIPTION, "faults": ["pause"], "promises": [stale]})
    late = _run("a", "w1", 0, 5)
    late.accepted = accepted
    run = FaultRun("pause", 0, 7, JOBS[:1])
    run.verdict = check(JOBS[:1], [late, _run("a", "w2", 3, 4)], [], {}, 10)
    assert [promise["observed"] for promise in broken_promises(description, run)] == broken
    assert [promise["observed"] for promise in unjudged_promises(description, run)] == unjudged
