"""docs/ecosystem.html as a browser shows it: one headless Chromium launch, its DOM read back and checked.

If this fails, the page does not render as a reader needs: the matrix table is missing or short, a link
points nowhere (a note number without its note, a file that is not in the tree), or Markdown leaked into the
page as raw text (backticks, ``[text](url)``, ``**``, ``*emphasis*``). The page is built by
``tools/ecosystem_page.py`` (``render_html`` and ``inline_html``); rebuild it with
``python -m tools.ecosystem_page``. Chromium is Debian's ``chromium`` (``bash ci/chromium.sh`` installs it; ci/test.sh's
phase 1 runs that and exports ``ALKSTORE_CHROMIUM``). Without a browser the test skips, and fails under
``ALKSTORE_REQUIRE=1``: a check that did not run is never a pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "ecosystem.html"
NOTES = ROOT / "docs" / "ecosystem" / "notes.json"
RAW_MARKDOWN = ("`", "](", "**")


def _chromium() -> str:
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
    found = os.environ.get("ALKSTORE_CHROMIUM") or next((w for n in names if (w := shutil.which(n))), None)
    if found is None:
        reason = "no chromium here: run bash ci/chromium.sh (it installs Debian's chromium)"
        if os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(reason + " — ALKSTORE_REQUIRE=1 makes a check that cannot run a failure")
        pytest.skip(reason)
    return found


def _dump_dom(chromium: str, page: Path) -> str:
    """The page's DOM after Chromium loaded it: one launch, its own profile, killed whole if it hangs."""
    with tempfile.TemporaryDirectory() as profile:
        args = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ]
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
        )
        try:
            out, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"chromium did not render {page} within 120 s")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, f"chromium exited {proc.returncode} rendering {page}"
    return out


class _Page(HTMLParser):
    """What the checks need from the rendered DOM: tables, links, ids and the visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.text: list[str] = []
        self.matrix_rows = 0
        self.matrix_headers: list[str] = []
        self._in_matrix = False
        self._in_header = False
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if attr.get("id"):
            self.ids.add(str(attr["id"]))
        if tag == "a" and attr.get("href"):
            self.links.append(str(attr["href"]))
        if tag == "table" and attr.get("id") == "matrix":
            self._in_matrix = True
        if tag in ("style", "script", "title"):
            self._skip += 1
        if self._in_matrix and tag == "tr":
            self.matrix_rows += 1
        if self._in_matrix and tag == "th" and self.matrix_rows == 1:
            self._in_header = True
            self.matrix_headers.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_matrix = False
        if tag == "th":
            self._in_header = False
        if tag in ("style", "script", "title"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._in_header:
            self.matrix_headers[-1] += data


@pytest.fixture(scope="module")
def rendered() -> _Page:
    parsed = _Page()
    parsed.feed(_dump_dom(_chromium(), PAGE))
    return parsed


def test_the_matrix_table_has_a_column_per_engine_and_a_row_per_clause(rendered: _Page) -> None:
    """Page: Chromium shows the matrix with one column per engine of the notes and at least 50 rows."""
    engines = json.loads(NOTES.read_text(encoding="utf-8"))["engines"]
    assert len(rendered.matrix_headers) == 1 + len(engines)
    for name, header in zip(engines, rendered.matrix_headers[1:], strict=True):
        assert header.startswith(name), f"column {header!r} is not engine {name!r}"
    assert rendered.matrix_rows > 50


def test_every_link_reaches_its_note_or_a_file_of_the_tree(rendered: _Page) -> None:
    """Page: each in-page link has its anchor, each relative link names a file under docs/; http(s) links are kept."""
    assert rendered.links, "the page has no links"
    for href in rendered.links:
        if href.startswith("#"):
            assert href[1:] in rendered.ids, f"link {href} has no element with that id"
        elif href.startswith(("http://", "https://")):
            continue
        else:
            target = (PAGE.parent / href.split("#", 1)[0]).resolve()
            assert target.exists(), f"link {href} names {target}, which is not in the tree"


def test_no_raw_markdown_is_left_in_the_text(rendered: _Page) -> None:
    """Page: no backtick, [text](url), ** or *emphasis* in what the browser shows: notes' Markdown became HTML."""
    text = "".join(rendered.text)
    for raw in RAW_MARKDOWN:
        assert raw not in text, f"raw Markdown {raw!r} shows on the page: …{text[max(0, text.find(raw) - 60) :][:140]}…"
    emphasis = re.search(r"(?<![*\w])\*[A-Za-z][^*]*\*", text)
    assert emphasis is None, f"raw Markdown emphasis shows on the page: {emphasis.group(0) if emphasis else ''}"
