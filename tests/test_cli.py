"""The ``alkstore`` command as a new user meets it: help texts, ``report`` on bad files, ``certify``'s header.

``alkstore report`` on a file it cannot use ends with exit code 2 and one
line naming the file and the fault, never a traceback. ``alkstore certify``
runs under an empty pytest configuration of its own, named in its header
(no ``configfile: …/dev/null``), unmoved by the caller's ini file or conftest,
and shows the Postgres DSN only when a postgres engine is in the run.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_cli import main
from alkstore_contract.report.build import SCHEMA_PATH
from alkstore_contract.report.read import schema_fault
from tests.test_plugin import INT32_ENGINE

TIMEOUT_S = 300


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A report the suite itself writes (mem, two rows: one passed, one skipped), so it has today's format."""
    where = tmp_path_factory.mktemp("real-report")
    path = where / "report.json"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "ALKSTORE_"))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--alkstore-engine=mem"]
    command += ["-k", "claim_order or durability", f"--alkstore-report={path}"]
    subprocess.run(command, cwd=where, env=env, capture_output=True, timeout=TIMEOUT_S, check=False)
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def a_report(real_report: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(real_report)


def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def _write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], *expected: str) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("alkstore report: ")
    for text in expected:
        assert text in err
    return err


def test_a_report_the_suite_wrote_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a_report: dict[str, Any]
) -> None:
    jsonschema.validate(a_report, _schema())
    good = _write(tmp_path / "good.json", a_report)
    html, markdown = tmp_path / "m.html", tmp_path / "m.md"
    assert main(["report", str(good), "--html", str(html), "--markdown", str(markdown)]) == 0
    assert "claim_order" in html.read_text(encoding="utf-8")
    assert "claim_order" in markdown.read_text(encoding="utf-8")
    assert capsys.readouterr() == ("", "")


def test_report_on_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    _one_line_exit_2(capsys, ["report", str(missing)], str(missing), "no such file")


def test_report_on_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _one_line_exit_2(capsys, ["report", str(tmp_path)], str(tmp_path), "a directory")


def test_report_on_broken_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"report_format": 1,\n', encoding="utf-8")
    _one_line_exit_2(capsys, ["report", str(broken)], str(broken), "not valid JSON", "line 2")


def test_report_on_bytes_that_are_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    _one_line_exit_2(capsys, ["report", str(binary)], str(binary), "not UTF-8")


def _not_a_report_cases(report: dict[str, Any]) -> dict[str, tuple[object, str]]:
    return {
        "no-engines": ({"name": "not a report"}, "the top level has no 'report_format'"),
        "a-list": ([1, 2], "the top level is [1, 2], not of type object"),
        "format-99": ({**report, "report_format": 99}, "report_format is 99, not "),
        "engines-not-a-list": ({**report, "engines": {"mem": {}}}, "engines is"),
    }


@pytest.mark.parametrize("case", ["no-engines", "a-list", "format-99", "engines-not-a-list"])
def test_report_on_json_that_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a_report: dict[str, Any], case: str
) -> None:
    value, fault = _not_a_report_cases(a_report)[case]
    path = _write(tmp_path / "shape.json", value)
    _one_line_exit_2(capsys, ["report", str(path)], str(path), "not an alkstore report", fault)


def test_report_names_the_bad_file_among_good_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a_report: dict[str, Any]
) -> None:
    good = _write(tmp_path / "good.json", a_report)
    bad_value = copy.deepcopy(a_report)
    del bad_value["engines"][0]["rows"][1]["notes"]
    bad = _write(tmp_path / "bad.json", bad_value)
    err = _one_line_exit_2(capsys, ["report", str(good), str(bad)], str(bad), "engines[0].rows[1] has no 'notes'")
    assert str(good) not in err


@pytest.mark.parametrize("flag", ["--html", "--markdown"])
def test_report_to_an_unwritable_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a_report: dict[str, Any], flag: str
) -> None:
    good = _write(tmp_path / "good.json", a_report)
    target = tmp_path / "no-such-dir" / "matrix.out"
    _one_line_exit_2(capsys, ["report", str(good), flag, str(target)], str(target), "cannot be written")


DELETE = object()
ROW: list[str | int] = ["engines", 0, "rows", 0]
ENGINE: list[str | int] = ["engines", 0]
MUTATIONS: dict[str, tuple[list[str | int], object]] = {
    "valid": ([], None),
    "row outcome unknown": ([*ROW, "outcome"], "exploded"),
    "row duration negative": ([*ROW, "duration_s"], -1),
    "row duration a string": ([*ROW, "duration_s"], "1 s"),
    "row seed a bool": ([*ROW, "seed"], True),
    "row clause lower case": ([*ROW, "clauses"], ["c1"]),
    "row extra key": ([*ROW, "colour"], "red"),
    "row without reason": ([*ROW, "reason"], DELETE),
    "engine clock unknown": ([*ENGINE, "clock"], "sundial"),
    "engine capability unknown": ([*ENGINE, "capabilities"], ["teleport"]),
    "engine certified a string": ([*ENGINE, "certified"], "yes"),
    "storage may be a string": ([*ENGINE, "storage"], "SQLite 3.40.1"),
    "settings without seed": (["settings", "seed"], DELETE),
    "settings may hold more": (["settings", "extra"], 1),
    "selection extra key": (["selection", "other"], ""),
    "format true": (["report_format"], True),
    "python a number": (["python"], 3.11),
}
"""Reports broken one way each (a path into the report and the value put there), and the untouched one."""


def _mutated(report: dict[str, Any], name: str) -> dict[str, Any]:
    path, value = MUTATIONS[name]
    mutated = copy.deepcopy(report)
    if path:
        target: Any = mutated
        for step in path[:-1]:
            target = target[step]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return mutated


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_the_shape_checker_agrees_with_jsonschema(name: str, real_report: dict[str, Any]) -> None:
    report = _mutated(real_report, name)
    schema = _schema()
    valid_by_jsonschema = jsonschema.Draft202012Validator(schema).is_valid(report)
    assert (schema_fault(report, schema) is None) == valid_by_jsonschema, name


def test_most_mutations_break_the_schema(real_report: dict[str, Any]) -> None:
    """The comparison above has teeth only if jsonschema refuses most of the mutated reports."""
    validator = jsonschema.Draft202012Validator(_schema())
    assert validator.is_valid(real_report)
    refused = [name for name in MUTATIONS if not validator.is_valid(_mutated(real_report, name))]
    assert len(refused) >= len(MUTATIONS) // 2, refused


def test_top_level_help_reads_as_prose(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out
    assert "Certify an alkstore engine" in out


def test_certify_help_explains_every_option_and_the_pytest_passthrough(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["certify", "--help"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    for option in ("--report", "--clock", "--require", "--xfail-file", "--examples", "--seed"):
        described = [line for line in lines if line.strip().startswith(option)]
        assert described, option
        at = lines.index(described[0])
        help_text = (described[0].split(None, 2)[2:] or [""])[0] + (lines[at + 1] if at + 1 < len(lines) else "")
        assert len(help_text.strip()) > 10, f"{option} has no help text: {described[0]!r}"
    assert "Options after -- go to pytest" in out


def _certify(engine: str, cwd: Path) -> str:
    """``alkstore certify ENGINE -- --collect-only`` from ``cwd``: the header, without running a row."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    command = [sys.executable, "-m", "alkstore_cli", "certify", engine, "--", "--collect-only"]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    return result.stdout + result.stderr


@pytest.fixture
def hostile_dir(tmp_path: Path) -> Path:
    """A project directory whose own pytest settings would break any run that read them."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text("raise SystemExit('the caller's conftest was loaded')\n", encoding="utf-8")
    return tmp_path


def test_certify_runs_under_its_own_empty_configuration(hostile_dir: Path) -> None:
    output = _certify("mem", hostile_dir)
    assert " collected" in output, output
    assert "configfile: pytest.ini" in output
    assert "/dev/null" not in output
    assert "conftest was loaded" not in output
    assert "no-such-option" not in output
    assert "PytestDeprecationWarning" not in output


def test_the_postgres_dsn_line_only_in_runs_with_postgres(hostile_dir: Path) -> None:
    assert "--alkstore-pg-dsn" not in _certify("mem", hostile_dir)
    assert "alkstore engine postgres --alkstore-pg-dsn=" in _certify("postgres", hostile_dir)


@pytest.mark.parametrize(
    ("source", "spec", "expected"),
    [
        ("from alkstore_contract.wire import open_wire\n", "bad_engine:adapter", "use alkstore_contract.suite.network"),
        ("adaptr = None\n", "bad_engine:adapter", "AttributeError: module 'bad_engine' has no attribute 'adapter'"),
        ("adapter = (\n", "bad_engine:adapter", "SyntaxError: "),
        ("", "bad-engine", "unknown engine 'bad-engine': no alkstore.engines entry point of that name"),
    ],
    ids=["ImportError", "AttributeError", "SyntaxError", "missing entry point"],
)
def test_certify_an_adapter_that_cannot_load_exits_2_with_one_line(
    tmp_path: Path, source: str, spec: str, expected: str
) -> None:
    """API-3: ``alkstore certify`` says in one line why the engine cannot be loaded; check cli._unloadable."""
    (tmp_path / "bad_engine.py").write_text(source, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(tmp_path)
    command = [sys.executable, "-m", "alkstore_cli", "certify", spec]
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"alkstore certify: engine '{spec}' ") or result.stderr.startswith(
        f"alkstore certify: unknown engine '{spec}'"
    )
    assert expected in result.stderr
    assert not list(tmp_path.glob("alkstore-report-*.json"))


KNOWN_DIFFERENCES = (
    "enqueue_opts_resolution[int32] E7 a 32-bit priority column\n"
    "bounds_at_their_edge[int32] E9 a 32-bit priority column refuses the int64 bounds\n"
)


@pytest.mark.parametrize(
    ("listing", "code"),
    [(KNOWN_DIFFERENCES, 0), (KNOWN_DIFFERENCES + "claim_order[int32] C2 a difference the engine does not have\n", 1)],
    ids=["only the listed differences", "a listed difference that did not fail"],
)
def test_certify_with_an_expected_failures_file_exits_0_only_when_no_row_failed(
    tmp_path: Path, listing: str, code: int
) -> None:
    """E7 on an int32 engine: exit 0 on its known differences; a strict entry that passes fails the run (exit 1).

    If this fails, check ``known`` in cli._certify: it needs pytest's exit code 0 (no row failed) as well as a
    certificate refused on listed failures only.
    """
    (tmp_path / "int32_engine.py").write_text(INT32_ENGINE, encoding="utf-8")
    xfail = tmp_path / "expected-failures.txt"
    xfail.write_text(listing, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "ALKSTORE_"))}
    env["PYTHONPATH"] = str(tmp_path)
    command = [sys.executable, "-m", "alkstore_cli", "certify", "int32_engine:adapter"]
    command += ["--xfail-file", str(xfail), "--report", str(tmp_path / "report.json")]
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert result.returncode == code, result.stdout[-3000:] + result.stderr[-2000:]


ECOSYSTEM_CHECK = ["matrix", "--check"]


def test_matrix_still_runs_the_page_builder_and_warns_where_it_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """``alkstore matrix`` keeps working for a release, from a checkout, with a warning naming the new command."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    with pytest.warns(DeprecationWarning, match=r"python -m tools\.ecosystem_page"):
        assert main(ECOSYSTEM_CHECK) == 0


def test_matrix_without_the_repository_says_where_the_builder_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed from the wheel, ``tools`` is absent: one line and exit code 2, never an ImportError."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "tools.ecosystem_page", None)  # what an install without tools/ finds
    with pytest.warns(DeprecationWarning, match="alkstore matrix is deprecated"):
        assert main(ECOSYSTEM_CHECK) == 2
    out, err = capsys.readouterr()
    assert (out, err.count("\n")) == ("", 1), err
    assert err.startswith("alkstore matrix: ")
    assert "python -m tools.ecosystem_page" in err
    assert "root of a checkout" in err


@pytest.mark.parametrize("argv", [["frob"], ["certify"], ["report"], ["faults"], []])
def test_a_usage_error_of_the_command_is_one_line_and_status_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every CLI error path answers in one line (issue 48): argparse's usage block would be two or more."""
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("alkstore: "), err
