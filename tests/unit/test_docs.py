"""The README and the pages under docs/ hold what a new user needs: the README stays short, every
link between the pages resolves (file and heading), and every workflow snippet a user may copy
passes the workflow auditor CI runs on the project's own workflows (zizmor)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300
# A snippet that is a list of steps is audited inside a job of its own.
STEPS_WORKFLOW = """name: snippet
on: workflow_dispatch
permissions: {}
jobs:
  snippet:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    permissions:
      contents: read
    steps:
"""


def tokens(page: Path) -> list[Token]:
    return MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found = tokens(page)
    return {
        slug(found[i + 1].content)
        for i, token in enumerate(found)
        if token.type == "heading_open" and found[i + 1].type == "inline"
    }


def links(page: Path) -> list[str]:
    hrefs: list[str] = []
    for token in tokens(page):
        for child in token.children or []:
            if child.type == "link_open":
                hrefs.append(str(child.attrs["href"]))
    return hrefs


def workflow_snippets() -> list[tuple[str, str]]:
    """(where, workflow text) of every YAML snippet that holds a job or steps."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        for token in tokens(page):
            if token.type != "fence" or token.info.strip() not in {"yaml", "yml"}:
                continue
            where = f"{page.relative_to(ROOT)}:{(token.map or [0])[0] + 1}"
            if re.search(r"(?m)^jobs:", token.content):
                found.append((where, token.content))
            elif token.content.startswith("- "):
                steps = "".join(f"      {line}\n" for line in token.content.splitlines())
                found.append((where, STEPS_WORKFLOW + steps))
    return found


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_between_the_pages_resolves(page: Path) -> None:
    broken = []
    for href in links(page):
        if re.match(r"[a-z]+:", href):
            continue  # a web address: not ours to check offline
        path, _, fragment = href.partition("#")
        target = (page.parent / path).resolve() if path else page
        missing_heading = bool(fragment) and target.suffix == ".md" and target.exists()
        if not target.exists() or (missing_heading and fragment not in anchors(target)):
            broken.append(href)
    assert broken == [], f"{page.name}: links to nothing: {broken}"


def test_every_page_under_docs_is_linked_from_the_readme() -> None:
    linked = {href.partition("#")[0] for href in links(ROOT / "README.md")}
    unlinked = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in linked]
    assert unlinked == []


def test_there_are_workflow_snippets_to_audit() -> None:
    assert len(workflow_snippets()) >= 3  # the quick start, the clean-up, actions/cache


@pytest.mark.parametrize(("where", "workflow"), workflow_snippets(), ids=lambda v: str(v)[:40])
def test_every_workflow_snippet_passes_zizmor(tmp_path: Path, where: str, workflow: str) -> None:
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent))
    assert zizmor is not None, "zizmor is a test dependency: run scripts/dev-setup"
    snippet = tmp_path / "snippet.yml"
    snippet.write_text(workflow, encoding="utf-8")
    run = subprocess.run(
        [zizmor, "--offline", "--no-progress", str(snippet)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, f"{where}:\n{run.stdout}{run.stderr}"
