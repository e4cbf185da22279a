"""The docs a user reads are complete and their examples work as the docs say.

- No page or docstring sends a reader to ``SPEC.md``, which users do not have:
  docs/contract.md is the published contract, and it names every clause the
  suite cites and every member of the public surface.
- docs/testing-with-mem.md's snippets, written into the files their first
  lines name, form a project whose tests pass when run with plain ``pytest``,
  as the page says.
- docs/certify-reference.md's example xfail file keeps each reason whole
  when the suite reads it.
- README's engines sentence names the rows mem skips for want of a capability.
- Every link and image of README.md and docs/ that points into the
  repository points at a file that is there.
- docs/certify-reference.md's listings of the driver, the surface and
  ``Job`` are what ``python -m tools.api_reference`` generates from the code
  now, and the page names the example's every file.
- Every decision code or docs cite by id (``DEC-sweep-order``) is in
  docs/contract.md's Decisions table and spelled out at its clause; nothing
  cites a decision by a number a reader cannot look up.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import alkstore_mem
import pytest

from alkstore_contract import surface
from alkstore_contract.suite.row import all_rows
from alkstore_contract.suite.xfail import load_xfail_file
from tests.suite_subprocess import run_pytest
from tools.api_reference import RENDERERS, generated_blocks, regenerate

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TIMEOUT_S = 300
SHIPPED_TEXT = ("README.md", "docs", "alkstore_contract", "reference_engine", "engines_under_test", "examples")
"""What a user reads: the README, the docs, and the sources of every package and example."""


def _blocks(path: Path) -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in FENCE.finditer(path.read_text(encoding="utf-8"))]


def _shipped_files() -> list[Path]:
    found: list[Path] = []
    for name in SHIPPED_TEXT:
        top = REPO / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        found += [path for path in candidates if path.suffix in {".md", ".py", ".suite", ".json", ".toml"}]
    return found


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
"""A markdown link or image: its target is group 1."""


def test_every_link_into_the_repository_points_at_a_file_that_is_there() -> None:
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = [
        f"{page.relative_to(REPO)}: {target}"
        for page in pages
        for target in LINK.findall(page.read_text(encoding="utf-8"))
        if not re.match(r"[a-z]+:", target)
        and target.split("#")[0]
        and not (page.parent / target.split("#")[0]).exists()
    ]
    assert not broken, f"links to files that are not in the repository: {broken}"


def test_nothing_cites_spec_md() -> None:
    citing = [
        f"{path.relative_to(REPO)}:{number}"
        for path in _shipped_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "SPEC.md" in line
    ]
    assert citing == [], "these cite SPEC.md, which users do not have; cite docs/contract.md"


ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
UPSTREAM = frozenset({"asyncpg", "pytest", "hypothesis", "sqlite", "postgres", "pg-boss", "upstream"})
"""Projects whose own trackers a page may cite (``asyncpg issues #784``): the ban is on this project's."""


def issue_numbers(text: str) -> list[str]:
    """Every 'issue N' of ``text`` that is not an upstream project's, whitespace folded (a number may wrap)."""
    folded = " ".join(text.split())
    return [
        found.group(0)
        for found in ISSUE_NUMBER.finditer(folded)
        if folded[: found.start()].rstrip().rpartition(" ")[2].lower() not in UPSTREAM
    ]


def _help_texts() -> list[str]:
    """What ``alkstore --help`` and its commands', and ``pytest --help``'s alkstore options, print."""
    cli = [[sys.executable, "-m", "alkstore_cli", *args, "--help"] for args in ([], ["certify"], ["report"])]
    runs = [subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False) for command in cli]
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    return [run.stdout for run in runs] + [plugin.stdout[plugin.stdout.find("alkstore") :]]


def test_no_user_facing_text_cites_an_issue_number() -> None:
    """Docs, docstrings, messages and --help never say 'issue 7': a user has no tracker to look it up in."""
    pages = [REPO / "CHANGELOG.md", *_shipped_files(), *sorted((REPO / "benchmarks").rglob("*.py"))]
    cited = [f"{path.relative_to(REPO)}: {found}" for path in pages for found in issue_numbers(path.read_text("utf-8"))]
    cited += [f"--help: {found}" for text in _help_texts() for found in issue_numbers(text)]
    assert not cited, f"issue numbers in user-facing text (say what the issue asked instead): {cited}"


def test_the_issue_number_check_can_fail() -> None:
    assert issue_numbers("see issue 7, and Issue\n  16; asyncpg issues #784") == ["issue 7", "Issue 16"]


def test_contract_md_names_every_member_of_the_public_surface() -> None:
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    section = text.split("## Public surface", 1)[1].split("\n## ", 1)[0]
    members = {
        name
        for protocol in (surface.Store, surface.Queue, surface.JobHandle)
        for name, _ in inspect.getmembers(protocol)
        if not name.startswith("_")
    }
    assert sorted(name for name in members if f"`{name}" not in section and f".{name}" not in section) == []


DECISION_ID = re.compile(r"\bDEC-[a-z0-9]+(?:-[a-z0-9]+)*")
NUMBERED_DECISION = re.compile(r"\bdecisions? [0-9]", re.IGNORECASE)


def _decision_table() -> set[str]:
    text = (DOCS / "contract.md").read_text(encoding="utf-8")
    table = text.split("\n## Decisions\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(DEC-[a-z0-9-]+)` \|", table, flags=re.MULTILINE))


def test_every_cited_decision_is_defined_in_the_contract() -> None:
    defined = _decision_table()
    body = (DOCS / "contract.md").read_text(encoding="utf-8").split("\n## Decisions\n", 1)[0]
    assert sorted(defined - set(re.findall(r"\(`(DEC-[a-z0-9-]+)`\)", body))) == [], "in the table, not at a clause"
    cited = {
        f"{path.relative_to(REPO)}: {name}"
        for path in [*_shipped_files(), *sorted((REPO / "tests").rglob("*.py"))]
        for name in DECISION_ID.findall(path.read_text(encoding="utf-8"))
        if name not in defined
    }
    assert sorted(cited) == [], "these cite a decision id docs/contract.md's Decisions table does not have"


def test_no_decision_is_cited_by_number() -> None:
    citing = [
        f"{path.relative_to(REPO)}:{number}"
        for path in [*_shipped_files(), *sorted((REPO / "tests").rglob("*.py"))]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if NUMBERED_DECISION.search(line)
    ]
    assert citing == [], "cite the decision's id from docs/contract.md's Decisions table (DEC-…)"


def test_the_api_listings_of_the_certify_reference_match_the_code() -> None:
    text = (DOCS / "certify-reference.md").read_text(encoding="utf-8")
    assert sorted(generated_blocks(text)) == sorted(RENDERERS)
    assert regenerate(text) == text, "the code changed: run `python -m tools.api_reference` and commit the page"


def test_certify_your_engine_names_every_file_of_the_example() -> None:
    text = (DOCS / "certify-your-engine.md").read_text(encoding="utf-8")
    package = REPO / "examples" / "alkstore_example_dict" / "alkstore_example_dict"
    assert sorted(path.name for path in package.glob("*.py") if path.name not in text) == []


def test_the_example_driver_is_as_short_as_the_page_says() -> None:
    """The page promises a driver under 250 lines: the shortest readable engine that certifies."""
    driver = REPO / "examples" / "alkstore_example_dict" / "alkstore_example_dict" / "driver.py"
    assert "under 250 lines" in (DOCS / "certify-your-engine.md").read_text(encoding="utf-8")
    assert len(driver.read_text(encoding="utf-8").splitlines()) < 250


def test_the_readme_names_the_rows_mem_skips_by_design() -> None:
    """README must not claim every engine passes every row: mem lacks capabilities some rows need."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    sentence = next(part for part in readme.split("- **") if part.startswith("Three engines"))
    skipped = sorted(row.name for row in all_rows() if not set(row.requires) <= set(alkstore_mem.adapter.capabilities))
    assert skipped
    for name in skipped:
        assert f"`{name}`" in sentence, f"README's engines sentence does not say mem skips {name}"
    assert "skips by design" in sentence


def test_the_testing_with_mem_snippets_pass_with_plain_pytest(tmp_path: Path) -> None:
    written = []
    for _, code in _blocks(DOCS / "testing-with-mem.md"):
        named = re.match(r"# (\S+)\n", code)
        if named:
            target = tmp_path / named.group(1)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code, encoding="utf-8")
            written.append(named.group(1))
    assert {"pytest.ini", "myapp/emails.py", "tests/conftest.py", "tests/test_emails.py"} <= set(written)
    (tmp_path / "myapp" / "__init__.py").write_text("", encoding="utf-8")  # "Add an empty myapp/__init__.py"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "PYTHONPATH"))}
    result = run_pytest(tmp_path, env, launcher=[str(Path(sys.executable).parent / "pytest")], timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b5 passed\b", result.stdout), result.stdout
    assert "warning" not in result.stdout.lower()


def test_the_xfail_example_keeps_its_reasons_whole(tmp_path: Path) -> None:
    examples = [code for _, code in _blocks(DOCS / "certify-reference.md") if code.startswith("# xfail.txt")]
    assert len(examples) == 1
    listing = tmp_path / "xfail.txt"
    listing.write_text(examples[0], encoding="utf-8")
    entries = load_xfail_file(listing)
    assert entries
    for entry_line in (line for line in examples[0].splitlines() if line and not line.startswith("#")):
        row_id, clause, reason = entry_line.split(maxsplit=2)
        assert [(entry.clause, entry.reason) for entry in entries[row_id]] == [(clause, reason.strip())]


@pytest.mark.parametrize("fence", ["python", "text", "ini", "sh", "toml", ""])
def test_fence_reads_every_kind_of_block(fence: str) -> None:
    text = f"x\n```{fence}\nbody\n```\n"
    assert FENCE.findall(text) == [(fence, "body\n")]
