"""The runtime-faults checker and ledger on hand-made runs: each outcome of docs/runtime-faults.md, and none
where a run is clean (a checker that cannot say "no" is as useless as one that cannot say "yes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alkstore_faults.checker import STALE, FaultEvent, Job, check, distribution
from alkstore_faults.ledger import Run, read_ledgers, runs_of
from alkstore_faults.promises import judged, normalised
from alkstore_faults.report import broken_promises, unjudged_promises
from alkstore_faults.runner import parse_description
from alkstore_faults.scenario import FaultRun

JOBS = [Job("a", 1.0), Job("b", 1.0)]


def _run(job: str, worker: str, start: float, end: float | None, ok: bool | None = True) -> Run:
    return Run(job, worker, 100 + int(worker[1:]), None, start, start, end, ok if end is not None else None)


def test_a_clean_run_has_no_findings() -> None:
    verdict = check(JOBS, [_run("a", "w1", 0, 1), _run("b", "w2", 0, 1)], [], {}, 10)
    assert verdict.findings == []


def test_a_job_that_never_ended_ok_is_lost_and_a_failing_one_is_not() -> None:
    jobs = [Job("a", 1.0), Job("b", 1.0, fail=True)]
    verdict = check(jobs, [_run("a", "w1", 0, None), _run("b", "w2", 0, 1, ok=False)], [], {"w1": 0.5}, 10)
    assert [(f.outcome, f.job) for f in verdict.findings] == [("lost", "a")]


def test_two_sequential_completions_are_twice_not_concurrent() -> None:
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 1), _run("a", "w2", 2, 3)], [], {}, 10)
    assert [f.outcome for f in verdict.findings] == ["twice"]


def test_overlap_with_a_late_completion_is_concurrent_stale_and_twice() -> None:
    verdict = check(JOBS[:1], [_run("a", "w1", 0, 5), _run("a", "w2", 3, 4)], [], {}, 10)
    assert sorted(f.outcome for f in verdict.findings) == ["concurrent", "stale_unobserved", "twice"]
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
    assert normalised(old) == {
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
    assert [f.outcome for f in check(JOBS[:1], runs, [], {"w1": 2.5}, 10).findings] == ["concurrent"]


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
