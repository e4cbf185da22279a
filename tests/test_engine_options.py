"""An engine's own pytest options, declared by its adapter as data: registered, resolved, handed back.

The engine here is installed for the run in a process of its own only: a
``.dist-info`` with an ``alkstore.engines`` entry point on its ``PYTHONPATH``, exactly what a pip
install of a third-party engine leaves behind. Its adapter is the mem
engine's with one ``AdapterOption``; the Postgres engine's DSN option is the
same mechanism (``tests/test_postgres_engine.py`` checks its precedence).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.forked_pytester import runpytest_forked

Run = Callable[..., pytest.RunResult]

ENGINE = """
import os
from alkstore_contract.adapter import AdapterOption
from alkstore_mem import MemAdapter

WHERE = AdapterOption(
    flag="--alkstore-fake-where",
    ini="alkstore_fake_where",
    env="ALKSTORE_FAKE_WHERE",
    help="where the fake engine keeps its jobs",
    default="nowhere",
    metavar="PLACE",
    redact=lambda value: value.replace("secret", "***"),
)


class FakeAdapter(MemAdapter):
    name = "fake"
    options = (WHERE,)
    handed = []

    def configure(self, values):
        self.handed.append(dict(values))
        with open(os.environ["HANDED_LOG"], "a") as log:
            log.write(repr(dict(values)) + "\\n")


adapter = FakeAdapter()
"""

TEST_FILE = """
import os
from fake_engine import adapter

def test_handed():
    assert adapter.handed[-1] == {"alkstore_fake_where": os.environ["EXPECTED"]}
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Run:
    """pytest in a process of its own (``tests/forked_pytester.py``), the fake engine installed (a dist-info)."""
    pytester.makepyfile(fake_engine=ENGINE, test_handed=TEST_FILE)
    info = pytester.mkdir("fake_engine-0.1.dist-info")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-engine\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[alkstore.engines]\nfake = fake_engine:adapter\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    monkeypatch.setenv("HANDED_LOG", str(pytester.path / "handed.log"))
    monkeypatch.delenv("ALKSTORE_FAKE_WHERE", raising=False)
    monkeypatch.delenv("ALKSTORE_REQUIRE", raising=False)

    def go(*args: str) -> pytest.RunResult:
        return runpytest_forked(pytester, "-p", "no:cacheprovider", *args)

    return go


def test_the_option_and_its_ini_key_are_registered_with_one_help_line(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    result = run("--help")
    result.stdout.fnmatch_lines(
        [
            "*alkstore fake engine*",
            "*--alkstore-fake-where=PLACE*",
            "*where the fake engine keeps its jobs (env ALKSTORE_FAKE_WHERE; ini alkstore_fake_where; default*",
            "*alkstore_fake_where (string):",
            "*where the fake engine keeps its jobs (as --alkstore-fake-where)",
        ]
    )


def test_option_beats_environment_beats_ini_beats_default(
    run: Run, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each source in turn reaches ``configure``, in a session that certifies nothing (the engine's own tests)."""
    monkeypatch.setenv("EXPECTED", "nowhere")
    run("-k", "test_handed").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nalkstore_fake_where = from-ini\n")
    monkeypatch.setenv("EXPECTED", "from-ini")
    run("-k", "test_handed").assert_outcomes(passed=1)
    monkeypatch.setenv("ALKSTORE_FAKE_WHERE", "from-env")
    monkeypatch.setenv("EXPECTED", "from-env")
    run("-k", "test_handed").assert_outcomes(passed=1)
    monkeypatch.setenv("EXPECTED", "from-option")
    run("-k", "test_handed", "--alkstore-fake-where=from-option").assert_outcomes(passed=1)


def test_a_certifying_run_configures_the_engine_and_echoes_the_value_redacted(
    run: Run, pytester: pytest.Pytester
) -> None:
    result = run("--alkstore-engine=fake", "-k", "claim_extents", "--alkstore-fake-where=top-secret-place")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["alkstore engine fake --alkstore-fake-where=top-***-place (from --alkstore-fake-where)"]
    )
    assert "top-secret-place" not in result.stdout.str()
    *during, after = (pytester.path / "handed.log").read_text(encoding="utf-8").splitlines()
    assert set(during) == {"{'alkstore_fake_where': 'top-secret-place'}"}
    assert after == "{'alkstore_fake_where': None}", "the session hands back what the adapter had before it"


def test_a_malformed_declaration_is_a_usage_error_naming_the_engine(run: Run, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(fake_engine=ENGINE.replace('flag="--alkstore-fake-where"', 'flag="--where"'))
    result = run("--alkstore-engine=fake")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*engine 'fake': options: --where must start with --alkstore-*"])
