"""Every quote of another project's docs on docs/ecosystem.md and docs/runtime-faults.md is that page's words.

Each adapter (``ecosystem/<library>/adapter``) and each runner (``ecosystem/<library>/runner*``) keeps a
``sources.json`` beside it: a list of ``{"url", "taken", "how", "excerpt"}``, the excerpt being the paragraph of the
quoted page that holds the quote, verbatim, as it was taken (by the search tool or from the installed package). A quote
holds when it appears, whitespace aside, in an excerpt whose ``url`` is the quote's doc without its fragment.
If this fails, a quote was altered, or moved to a page it is not on: fix the quote (docs/ecosystem/notes.json
for the matrix's promises, the runner's ``describe`` for the runtime-faults pages), never the excerpt.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from alkstore_faults.runner_program import RunnerError, find_runner, missing_package, shipped_runners

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "docs" / "ecosystem" / "notes.json"
FAULT_REPORTS = ROOT / "docs" / "runtime-faults"
ADAPTER_SOURCES = sorted(
    [
        *(ROOT / "ecosystem").glob("*/adapter/sources.json"),
        *(ROOT / "ecosystem").glob("*/adapter/alkstore_*/sources.json"),
    ]
)
"""The adapters' saved excerpts: a Node adapter's beside its package.json, a Python adapter's in its package."""
KINDS = ("promises", "caveats", "policies", "recovery_rules")
"""The members of a runner's description that quote a doc (protocol v2 adds the last two)."""
SCHEDULE_KINDS = ("promises", "caveats", "skips")
"""The members of a runner's ``schedule`` (the schedule workload) that quote a doc."""


def _quoting(described: dict[str, Any]) -> list[dict[str, Any]]:
    """Every entry of a description (or a report) that quotes a doc, its ``schedule``'s included."""
    schedule = described.get("schedule") or {}
    return [entry for kind in KINDS for entry in described.get(kind, [])] + [
        entry for kind in SCHEDULE_KINDS for entry in schedule.get(kind, [])
    ]


FIELDS = {"url", "taken", "how", "excerpt"}

RUNNERS_WITHOUT_SOURCES: dict[str, str] = {}
"""KNOWN MISSING: the runners whose quotes are not checked yet, each with why. The lead removes an entry when
the runner's ``sources.json`` lands; an entry whose runner has one fails ``test_the_known_missing_list_is_...``."""


def _normal(text: str) -> str:
    return " ".join(text.split())


def _sources(path: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(entries, list), f"{path}: a JSON list"
    assert entries, f"{path}: an empty list"
    for entry in entries:
        assert set(entry) == FIELDS, f"{path}: an entry has {sorted(entry)}, not {sorted(FIELDS)}"
        assert entry["taken"][:4].isdigit(), f"{path}: {entry['url']}: undated"
        assert entry["excerpt"].strip(), f"{path}: {entry['url']}: an empty excerpt"
    return entries


def _holds(quote: str, doc: str, sources: list[dict[str, Any]]) -> bool:
    """``quote`` is in one excerpt of ``doc``'s page; a quote that marks a cut with ``[...]`` holds when its parts
    are in that excerpt in their order."""
    page = doc.split("#", 1)[0]
    parts = [_normal(part) for part in quote.split("[...]")]
    for entry in sources:
        if entry["url"].split("#", 1)[0] != page:  # an excerpt may name the section it was taken from
            continue
        text, at = _normal(entry["excerpt"]), 0
        for part in parts:
            at = text.find(part, at)
            if at < 0:
                break
            at += len(part)
        else:
            return True
    return False


def _this_projects_pages(quoted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """This project's own docs a runner quotes (``docs/worker.md#…``), as excerpts: each whole page, read here, as a
    reader sees it (Markdown's ``**`` bold markers left out)."""
    pages = {entry["doc"].split("#", 1)[0] for entry in quoted}
    return [
        {
            "url": page,
            "taken": "now",
            "how": "this checkout",
            "excerpt": (ROOT / page).read_text(encoding="utf-8").replace("**", ""),
        }
        for page in sorted(pages)
        if "://" not in page and (ROOT / page).is_file()
    ]


def _notes() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(NOTES.read_text(encoding="utf-8"))
    return found


def _libraries() -> list[tuple[str, dict[str, Any]]]:
    return [(name, e["library"]) for name, e in _notes()["engines"].items() if "library" in e]


@pytest.mark.parametrize(("name", "library"), _libraries(), ids=[name for name, _ in _libraries()])
def test_every_promise_of_the_matrix_is_verbatim_on_the_page_it_names(name: str, library: dict[str, Any]) -> None:
    """docs/ecosystem.md's 'What each library promises': each quote is in the saved excerpt of its ``doc``."""
    sources = _sources(ROOT / library["sources"])
    for promise in library["promises"]:
        assert promise.get("doc"), f"{name}: the promise {promise['quote'][:60]!r} names no doc"
        assert _holds(promise["quote"], promise["doc"], sources), (
            f"{name}: {promise['quote']!r} is not in any excerpt of {promise['doc']} in {library['sources']}"
        )


def test_an_altered_quote_fails_the_check() -> None:
    """The check can fail: procrastinate's words with one word changed (the issue's 'next major version')."""
    sources = _sources(ROOT / "ecosystem" / "procrastinate" / "adapter" / "alkstore_procrastinate" / "sources.json")
    doc = "https://github.com/procrastinate-org/procrastinate/blob/main/docs/howto/production/retry_stalled_jobs.md"
    said = "This parameter is deprecated and will be removed in a next major release"
    assert _holds(said, doc, sources)
    assert not _holds(said.replace("release", "version"), doc, sources)
    assert not _holds(said, "https://procrastinate.readthedocs.io/en/stable/", sources)
    assert _holds("This parameter is deprecated [...] wrongly retrying jobs", doc, sources)
    assert not _holds("wrongly retrying jobs [...] This parameter is deprecated", doc, sources)


def test_an_excerpt_taken_from_an_installed_package_is_in_that_package() -> None:
    """An excerpt whose ``how`` says an installed package is read back from it, wherever it is installed here."""
    import importlib.util

    checked = 0
    absent: set[str] = set()
    for path in ADAPTER_SOURCES:
        for entry in _sources(path):
            if not entry["url"].startswith("pypi:"):
                continue
            package, _, inner = entry["url"].removeprefix("pypi:").partition("/")
            spec = importlib.util.find_spec(package.split("==")[0])
            if spec is None:  # the ecosystem extra is not in the test command's venv; ci/ecosystem.sh installs it
                absent.add(package)
                continue
            assert spec.origin, f"{path}: {package} has no file to read"
            text = (Path(spec.origin).parent.parent / inner).read_text(encoding="utf-8")
            assert _normal(entry["excerpt"]) in _normal("\n".join(line.strip() for line in text.splitlines()))
            checked += 1
    if absent:
        pytest.skip(f"not read back, not installed here: {', '.join(sorted(absent))} (pip install -e '.[ecosystem]')")
    assert checked >= 2


def _description(name: str, runner: Path) -> dict[str, Any] | str:
    """What the runner's ``describe`` prints: a Python runner's ``DESCRIPTION`` literal when it is one, else the
    command itself, run as the harness runs it; or, when its library is not installed here (the test command's
    venv has none of the optional runners' libraries, nor their npm packages), the runner's one line saying
    which. Any other failure to describe fails here, never passes."""
    script = runner / "runner.py"
    if script.is_file():
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "DESCRIPTION" for t in node.targets):
                try:
                    found: dict[str, Any] = ast.literal_eval(node.value)
                    return found
                except ValueError:
                    break
    try:
        described = find_runner(name)
    except (
        RunnerError
    ) as exc:  # a runner with a venv of its own (Celery's): ci/faults.sh makes it, not the test command
        if "needs the interpreter" not in str(exc):
            raise
        return str(exc)
    try:
        done = described.call(["describe"], 120, described.env("", ""))
    except FileNotFoundError:  # the runner's language (Ruby: apt, by ci/faults.sh install) is not on this machine
        return f"{described.argv('describe')[0]} is not installed here: bash ci/faults.sh install"
    missing = missing_package(done.stderr) if done.returncode != 0 else None
    if missing is not None:
        return missing
    assert done.returncode == 0, f"{name}: describe exited {done.returncode}: {done.stderr[-800:]}"
    printed: dict[str, Any] = json.loads(done.stdout)
    return printed


def _runners() -> list[tuple[str, Path]]:
    return sorted(shipped_runners().items())


def _published(name: str) -> list[dict[str, Any]]:
    """Every promise, caveat, policy and recovery rule of the runner's committed reports (its schedule report's
    promises, caveats and skips too): what the page shows."""
    quoted: list[dict[str, Any]] = []
    for report in (FAULT_REPORTS / f"{name}.json", FAULT_REPORTS / "schedule" / f"{name}.json"):
        if report.is_file():
            quoted += _quoting(json.loads(report.read_text(encoding="utf-8")))
    return quoted


@pytest.mark.parametrize(("name", "runner"), _runners(), ids=[name for name, _ in _runners()])
def test_every_quote_of_a_runner_is_verbatim_on_the_page_it_names(name: str, runner: Path) -> None:
    """A runner's quotes (its ``describe`` and its committed report) hold against its ``sources.json`` (another
    project's pages) or this checkout (this project's docs)."""
    sources_path = runner / "sources.json"
    ours = _this_projects_pages(_published(name))
    if not sources_path.is_file() and any(
        e["doc"].split("#", 1)[0] not in {o["url"] for o in ours} for e in _published(name)
    ):
        assert name in RUNNERS_WITHOUT_SOURCES, f"{name}: no sources.json and not listed as missing"
        pytest.skip(f"KNOWN MISSING: {name}: {RUNNERS_WITHOUT_SOURCES[name]}")
    described = _description(name, runner)
    said = [] if isinstance(described, str) else _quoting(described)
    quoted = _published(name) + said
    sources = _this_projects_pages(quoted) + (_sources(sources_path) if sources_path.is_file() else [])
    assert quoted, f"{name}: no quote to check"
    for entry in quoted:
        assert _holds(entry["quote"], entry["doc"], sources), (
            f"{name}: {entry['quote']!r} is not in any excerpt of {entry['doc']}"
        )
    if isinstance(described, str):
        pytest.skip(f"{name}: the published quotes hold; its describe was not read here: {described}")


def test_the_known_missing_list_names_only_runners_without_sources() -> None:
    """An entry of ``RUNNERS_WITHOUT_SOURCES`` whose runner has a ``sources.json`` must go: its quotes are checked."""
    runners = dict(_runners())
    assert set(RUNNERS_WITHOUT_SOURCES) <= set(runners), sorted(set(RUNNERS_WITHOUT_SOURCES) - set(runners))
    stale = sorted(n for n in RUNNERS_WITHOUT_SOURCES if (runners[n] / "sources.json").is_file())
    assert not stale, f"these runners have a sources.json now: remove them from RUNNERS_WITHOUT_SOURCES: {stale}"
