"""The Quartz runner (ecosystem/quartz/runner/) and the protocol's side every Java runner shares
(ecosystem/kit/RunnerProtocol.java): compiled with javac against Debian's jars, it describes itself as the harness
reads a description, refuses anything but its four subcommands in one line, writes ledger records the harness
reads back as runs, and names the Debian package of a missing jar in the one line the harness recognises. Java and
Quartz's jars are not in the test command's install (ci/faults.sh install brings them): without them each test
skips, naming the install command."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from alkstore_postgres.provision import server_bindir

from alkstore_faults.handler_records import read_ledgers, runs_of
from alkstore_faults.runner_program import missing_package, parse_description, runner_directory
from tests.broken_runtimes import lost_under_kill9
from tests.full_matrix import full_matrix_only

BROKEN = Path(__file__).resolve().parent / "fault_runtimes" / "quartz_no_recovery"
JARS = ("quartz2.jar", "c3p0.jar", "postgresql.jar", "slf4j-api.jar", "slf4j-simple.jar")
INSTALL = "apt-get install -y default-jdk-headless libquartz2-java libpostgresql-jdbc-java (bash ci/faults.sh install)"


def _runner() -> Path:
    directory = runner_directory("quartz")
    if shutil.which("java") is None or shutil.which("javac") is None:
        pytest.skip(f"no JDK on PATH: {INSTALL}")
    absent = [jar for jar in JARS if not (Path("/usr/share/java") / jar).is_file()]
    if absent:
        pytest.skip(f"Quartz's jars are not installed ({', '.join(absent)} missing): {INSTALL}")
    subprocess.run(["bash", "build.sh"], cwd=directory, check=True, timeout=300)
    return directory


def _java(directory: Path, source: str, tmp_path: Path, *env: tuple[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs a one-file Java program (``java Probe.java``) against the runner's compiled classes."""
    probe = tmp_path / "Probe.java"
    probe.write_text(source, encoding="utf-8")
    return subprocess.run(
        ["java", "-cp", str(directory / "build"), str(probe)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**dict(env), "PATH": "/usr/bin:/bin"},
    )


def _says_only(done: subprocess.CompletedProcess[str], line: str) -> None:
    """Status 1 and ``line`` alone on stderr, the line the harness turns into "runner needs ..."."""
    assert done.returncode == 1
    assert done.stderr.splitlines() == [line]
    assert missing_package(done.stderr) == line


def test_the_quartz_runner_describes_itself() -> None:
    directory = runner_directory("quartz")
    manifest = json.loads((directory / "runner.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["language"], manifest["broker"], manifest["protocol"]) == (
        "quartz",
        "java",
        "postgres",
        2,
    )
    _runner()
    done = subprocess.run(
        [*manifest["command"], "describe"], cwd=directory, capture_output=True, text=True, timeout=120, check=True
    )
    description = parse_description(json.loads(done.stdout))
    assert description.library == "quartz"
    assert description.version.startswith("quartz 2.3.")
    assert [(promise.outcome, promise.limit) for promise in description.promises] == [("lost", 0), ("twice", 0)]
    settings = {setting["name"]: setting["value"] for setting in description.settings}
    assert settings["org.quartz.jobStore.isClustered"] == "true"
    assert settings["JobBuilder.requestRecovery(true)"] is True
    assert all(setting["doc"] for setting in description.settings)
    assert [rule["state"] for rule in description.recovery_rules] == ["running"]


@pytest.mark.parametrize("argv", [["bogus"], [], ["enqueue"], ["describe", "extra"]])
def test_the_quartz_runner_refuses_anything_but_its_subcommands_in_one_line(argv: list[str]) -> None:
    directory = _runner()
    done = subprocess.run(
        ["bash", "run.sh", *argv], cwd=directory, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"unknown command {json.dumps(' '.join(argv))}: describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE"
    ]


def test_a_java_handlers_ledger_reads_back_as_its_runs(tmp_path: Path) -> None:
    """Two jobs through RunnerProtocol.perform (one told to fail) and an ack: the runs the checker pairs from them."""
    directory = _runner()
    ledger = tmp_path / "w1.jsonl"
    source = """
    import java.util.Map;
    public class Probe {
        public static void main(String[] args) throws Exception {
            RunnerProtocol.perform("j1", 0.01, false, 1);
            RunnerProtocol.record("ack", "j1", 1, Map.of("accepted", false));
            try {
                RunnerProtocol.perform("j2", 0, true, null);
                System.exit(3);
            } catch (RunnerProtocol.JobFailed failed) {
                System.out.print(failed.getMessage());
            }
        }
    }
    """
    done = _java(directory, source, tmp_path, ("ALKSTORE_FAULTS_LEDGER", str(ledger)), ("ALKSTORE_FAULTS_WORKER", "w1"))
    assert (done.returncode, done.stdout) == (0, "job j2 was told to fail"), done.stderr
    records, skipped = read_ledgers(tmp_path)
    assert skipped == []
    runs = {run.job: run for run in runs_of(records)}
    assert (runs["j1"].ok, runs["j1"].accepted, runs["j1"].worker, runs["j1"].attempt) == (True, False, "w1", 1)
    assert (runs["j2"].ok, runs["j2"].attempt) == (False, None)
    assert runs["j1"].end is not None
    assert runs["j1"].end - runs["j1"].start >= 0.01


def test_a_missing_class_is_named_by_its_debian_package_in_the_line_the_harness_reads(tmp_path: Path) -> None:
    directory = _runner()
    source = """
    import java.util.Map;
    public class Probe {
        public static void main(String[] args) {
            Integer status = RunnerProtocol.serve(
                "org.quartz.NoSuchRunner", new String[] {"describe"}, Map.of("org/quartz/", "libquartz2-java"));
            System.exit(status);
        }
    }
    """
    _says_only(
        _java(directory, source, tmp_path),
        "runner needs the Debian package libquartz2-java (class org/quartz/NoSuchRunner is not on the class path): "
        "install it (apt-get install -y libquartz2-java)",
    )


def test_a_missing_jar_stops_the_build_in_one_line_naming_its_debian_package() -> None:
    directory = runner_directory("quartz")
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = "source build.sh && QUARTZ_JARS=(/nonexistent/quartz9.jar:libquartz9-java) && quartz_build"
    _says_only(
        subprocess.run(["bash", "-c", script], cwd=directory, capture_output=True, text=True, timeout=60),
        "runner needs the Debian package libquartz9-java (/nonexistent/quartz9.jar is missing): install it "
        "(apt-get install -y libquartz9-java)",
    )


@full_matrix_only
def test_quartz_without_requests_recovery_loses_the_killed_instances_job(tmp_path: Path) -> None:
    """The runner's promise row about lost jobs can fail: its broken copy, whose jobs do not request recovery, loses
    the job of the instance killed under it (Quartz cleans it up and keeps no record), and the harness says so."""
    _runner()
    try:
        server_bindir()
    except RuntimeError as exc:
        pytest.skip(f"no Postgres server for the throwaway broker: {exc}")
    run, output = lost_under_kill9(BROKEN, tmp_path / "broken.json", 600)
    assert "BROKEN PROMISE under kill9 (round 0): lost 1 > 0" in output
    assert run["counts"]["lost"] == 1
    lost = [finding for finding in run["findings"] if finding["outcome"] == "lost"]
    assert len(lost) == 1
    assert "it has no record of the job" in lost[0]["detail"]
