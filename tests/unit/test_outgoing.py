"""The outgoing gate: what it lets out, judged by a CommonMark parser and the secrets corpus."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from memory_action.review.findings import Finding
from memory_action.review.findings_text import findings_markdown
from memory_action.safety.outgoing import Form, SafeText, gate
from tests.fakes.secrets_corpus import MASKED_VALUES, PLANTED

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# GitHub's mention filter: "@" after anything but ASCII [A-Za-z0-9_] (and not in a URL path).
MENTION = re.compile(r"(?<![A-Za-z0-9_/`])@[A-Za-z0-9]")
TOKEN = next(p for p in PLANTED if p.family == "GitHub classic PAT").secrets[0]
MASKED = MASKED_VALUES[0]
PACKAGE = Path(__file__).resolve().parents[2] / "memory_action"


def acting(markdown: str) -> list[str]:
    """What would act if GitHub rendered ``markdown``: mentions in prose, any raw HTML."""
    tokens = [t for block in PARSER.parse(markdown) for t in [block, *(block.children or [])]]
    html = [t.content for t in tokens if t.type in ("html_block", "html_inline")]
    return html + [t.content for t in tokens if t.type == "text" and MENTION.search(t.content)]


def test_only_the_gate_makes_safe_text() -> None:
    with pytest.raises(TypeError):
        SafeText("anything", object())
    makers = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "SafeText"
    ]
    assert makers and set(makers) == {"safety/outgoing.py"}


@pytest.mark.parametrize("form", [Form.MARKDOWN, Form.LINE, Form.TEXT])
def test_every_form_redacts_tokens_and_masked_values(form: Form) -> None:
    text = gate(f"token {TOKEN} and {MASKED} here", [MASKED], form=form).text
    assert TOKEN not in text and MASKED not in text
    assert "[REDACTED" in text


def test_a_secret_split_by_invisible_characters_is_redacted_whole() -> None:
    split = f"{TOKEN[:10]}\u200b{TOKEN[10:]}"
    text = gate(f"see {split} there").text
    assert TOKEN[:10] not in text and TOKEN[10:] not in text


def test_json_has_every_string_redacted_and_stays_json() -> None:
    document = {"entries": {f"- uses {TOKEN}": {"actor": MASKED, "n": 3}}, "ok": [f"x{MASKED}"]}
    text = gate(json.dumps(document), [MASKED], form=Form.JSON).text
    assert TOKEN not in text and MASKED not in text
    parsed = json.loads(text)
    assert parsed["entries"] and parsed["entries"][next(iter(parsed["entries"]))]["n"] == 3


@pytest.mark.parametrize(
    "text",
    [
        "Merci é@octo-org/everyone",
        "naïve@octo-org/everyone and ü@mona",
        "(@octo-org/everyone)",
        "<details><summary>x</summary>hidden",
        "<!-- hides the rest",
        "```\nunclosed @octo-org/everyone",
        "line\r@octo-org/everyone <b>",
        "a\u2028@octo-org/everyone",
    ],
)
def test_markdown_leaves_nothing_that_acts(text: str) -> None:
    safe = gate(text).text
    assert acting(safe) == []
    assert "\r" not in safe and "\u2028" not in safe


def test_our_own_html_is_kept_and_nothing_else() -> None:
    marker = "<!-- memory-agent:sticky agent=a -->"
    text = f"{marker}\n### Review\n\n<b>bold</b> @octo-org/everyone\n\n<sub>footer</sub>\n"
    safe = gate(text, ours=(marker, "<sub>", "</sub>")).text
    assert safe.startswith(marker)
    assert "<sub>footer</sub>" in safe
    assert [html.strip() for html in acting(safe)] == [marker, "<sub>", "</sub>"]


def test_an_email_address_and_a_url_path_are_no_mentions() -> None:
    text = "mail mona@example.com or see https://example.com/@mona"
    assert gate(text).text == text


def test_a_path_holding_a_line_end_and_a_mention_stays_in_its_code_span() -> None:
    finding = Finding(
        path="src/a.py\n\n@octo-org/everyone <b>",
        line=3,
        title="Title",
        body="Body",
        severity="low",
        suggestion="x = 1\r- @octo-org/everyone\n",
    )
    listed = findings_markdown([finding])
    assert acting(listed) == []
    tokens = PARSER.parse(listed)
    assert [t.type for t in tokens if t.type.endswith("list_open")] == ["bullet_list_open"]
    assert sum(t.type == "list_item_open" for t in tokens) == 1  # the CR ends no item
