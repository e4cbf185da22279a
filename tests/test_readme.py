"""The README's Python examples run as written, and print what the README says they print.

The code is read from README.md itself, never copied here, so an edit that
breaks an example (or leaves one that runs but does nothing) fails this test.
Each ```python block runs as a script in its own process, with this venv's
Python, from an empty temporary directory, as a reader pasting it would. A
block followed by "It prints:" and a ```text block must print exactly that.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools import perf_summary

README = Path(__file__).resolve().parents[1] / "README.md"
TIMEOUT_S = 60
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PRINTS = "It prints:"


@dataclass(frozen=True, slots=True)
class Example:
    """One ```python block: where it starts, the section it is in, its code and the output the README promises."""

    line: int
    section: str
    code: str
    expected: str | None


def examples(text: str) -> list[Example]:
    """Every ```python block of ``text``, each with the ```text block after it when "It prints:" introduces that."""
    fences = list(FENCE.finditer(text))
    found: list[Example] = []
    for index, fence in enumerate(fences):
        if fence.group(1) != "python":
            continue
        expected = None
        if index + 1 < len(fences):
            after = fences[index + 1]
            between = text[fence.end() : after.start()]
            if after.group(1) == "text" and between.strip().endswith(PRINTS):
                expected = after.group(2)
        headings = re.findall(r"^## (.+)$", text[: fence.start()], re.MULTILINE)
        line = text.count("\n", 0, fence.start()) + 1
        found.append(Example(line, headings[-1] if headings else "", fence.group(2), expected))
    return found


EXAMPLES = examples(README.read_text(encoding="utf-8"))


def _run(example: Example, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = cwd.parent / f"readme_line_{example.line}.py"
    script.write_text(example.code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"README.md:{example.line}" for example in EXAMPLES])
def test_readme_example_runs_as_written(example: Example, tmp_path: Path) -> None:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    result = _run(example, workdir)
    assert result.returncode == 0, f"README.md line {example.line} exits {result.returncode}:\n{result.stderr}"
    assert result.stderr == ""
    if example.expected is not None:
        assert result.stdout == example.expected
    assert list(workdir.iterdir()) == [], "the example leaves files behind in the directory it runs from"


def test_the_queue_example_runs_a_task_that_fails_once_and_then_succeeds() -> None:
    """The "Using a queue" example shows the whole round through a worker, not a claim that finds nothing."""
    queue_examples = [example for example in EXAMPLES if example.section == "Using a queue"]
    assert len(queue_examples) == 1
    assert "@app.task(" in queue_examples[0].code
    assert "alkstore worker" in queue_examples[0].code
    expected = queue_examples[0].expected
    assert expected is not None, 'the queue example has no "It prints:" block to check its output against'
    lines = expected.splitlines()
    assert lines[0].startswith("enqueued job ")
    assert [line.split(" of ")[0] for line in lines if ": attempt " in line] == [
        "job 1: attempt 1",
        "job 1: attempt 2",
    ]
    assert lines[-1].startswith("sent to ")


def test_examples_finds_blocks_and_their_output() -> None:
    text = "## A\n\n```python\nprint(1)\n```\n\nIt prints:\n\n```text\n1\n```\n\n## B\n\n```python\npass\n```\n"
    assert examples(text) == [Example(3, "A", "print(1)\n", "1\n"), Example(15, "B", "pass\n", None)]


MAX_LINES = 200


def test_the_readme_is_a_users_page_of_at_most_200_lines() -> None:
    """The README says what alkstore is and how to use it; measurements and their history live in docs/."""
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_LINES, f"README.md has {text.count(chr(10))} lines; move detail to docs/"
    assert text.count("<!-- perf-summary -->") == text.count("<!-- /perf-summary -->") == 1


def test_the_performance_summary_is_generated_from_the_committed_runs() -> None:
    """Every figure of the README's summary is one a committed run measured (docs/benchmarks/runs/*.json)."""
    text = README.read_text(encoding="utf-8")
    assert perf_summary.regenerate(text) == text, (
        "README.md's performance summary disagrees with docs/benchmarks/runs/: run `python -m tools.perf_summary`"
    )


def test_a_figure_the_runs_do_not_hold_is_caught() -> None:
    """The check can fail: a ratio edited by hand in the README's summary disagrees with the runs."""
    text = README.read_text(encoding="utf-8")
    start = text.index("<!-- perf-summary -->")
    edited = text[:start] + text[start:].replace("×", "1×", 1)
    assert perf_summary.regenerate(edited) != edited


BENCHMARKS_PAGE = README.parent / "docs" / "benchmarks.md"
MAX_BENCHMARK_LINES = 300


def test_the_benchmarks_page_is_method_and_latest_numbers() -> None:
    """docs/benchmarks.md: method, the latest numbers, how to reproduce; dated runs live as JSON beside it."""
    lines = BENCHMARKS_PAGE.read_text(encoding="utf-8").count("\n")
    assert lines < MAX_BENCHMARK_LINES, (
        f"docs/benchmarks.md has {lines} lines; commit older runs under docs/benchmarks/runs/"
    )


def _worker_run(pgqueuer: list[str]) -> dict[str, object]:
    """A run as ``benchmarks/worker.py --json`` writes it (its ``format``), cut to the rows the summary reads."""
    drain = ["system", "point", "processes", "handler", "drain jobs/s (median)", "min–max", "passes"]
    drain += ["alkstore-postgres ÷ this (median, range)", "ran twice", "durability"]
    latency = ["system", "samples", "enqueue→start p50 (ms)", "p99 (ms)", "ran twice"]
    load = {"load_at_start": ["0.40", "0.5", "0.5"], "load_at_end": ["1.10", "0.6", "0.5"]}
    return {
        "format": perf_summary.WORKER_FORMAT,
        "settings": {"jobs": 5000, "passes": 5, "slots": 10, "processes": [1, 4], "samples": 200},
        "runs": [{"started": "2026-12-06T02:00:00+00:00", "command": "python benchmarks/worker.py", **load}],
        "tables": [
            {
                "name": "drain",
                "columns": drain,
                "rows": [
                    ["alkstore-postgres", "equal", "4", "noop", "3,000", "2,900–3,100", "5", "", "0", "committed"],
                    ["pgqueuer", "equal", "4", "noop", *pgqueuer, "0", "batched"],
                    ["pgqueuer", "own", "4", "noop", "9,999", "9,999–9,999", "5", "0.30× (0.30–0.30)", "0", "x"],
                    ["pgqueuer", "equal", "1", "noop", "900", "800–950", "5", "1.60× (1.50–1.70)", "0", "batched"],
                ],
            },
            {"name": "latency", "columns": latency, "rows": [["alkstore-postgres", "200", "2.1", "8.0", "0"]]},
        ],
    }


def test_the_worker_summary_quotes_only_the_fair_tables_equal_slots_ratios_with_ranges_and_load(
    tmp_path: Path,
) -> None:
    import json

    assert "no run of the fair harness" in perf_summary.workers_sentence(tmp_path)
    run = _worker_run(["2,000", "1,900–2,100", "5", "1.50× (1.40–1.60)"])
    (tmp_path / "40-worker.json").write_text(json.dumps(run), encoding="utf-8")
    sentence = perf_summary.workers_sentence(tmp_path)
    assert "1.50× (1.40–1.60) pgqueuer's" in sentence
    assert "and 1.60× (1.50–1.70) pgqueuer's at 1 process(es)" in sentence
    assert "load average 0.40–1.10" in sentence
    assert "4 processes × 10 slots" in sentence
    assert "0.30×" not in sentence, "the own-concurrency point is not the summary's figure"
    assert "p50 2.1 ms, p99 8.0 ms on Postgres with NOTIFY" in sentence
    failed = _worker_run(["FAILED: stalled: 10 of 5000 jobs ran, none in the last 120 s; lost 4990", "", "", ""])
    (tmp_path / "41-worker.json").write_text(json.dumps(failed).replace("T02:", "T03:"), encoding="utf-8")
    assert "FAILED: stalled" in perf_summary.workers_sentence(tmp_path)
