"""The text as a reader sees it on GitHub, and the gate judging every text by it: each hidden
form of a token and of a masked value is redacted in its source span, on every form of text."""

from __future__ import annotations

import json
import re

import pytest

from memory_action.memory.provenance import render_changes_markdown
from memory_action.publish.report import SummaryInput, safe_summary
from memory_action.safety.outgoing import Form, gate
from memory_action.safety.reader_view import reader_view
from memory_action.safety.scrub import redact
from tests.fakes.rendered_forms import as_seen, rendered_forms
from tests.fakes.secrets_corpus import MASKED_VALUES, PLANTED

TOKEN = next(p for p in PLANTED if p.family == "GitHub classic PAT").secrets[0]
MASKED = MASKED_VALUES[1]
FORMS = [
    pytest.param(secret, form, id=f"{which} {name}")
    for which, secret in (("token", TOKEN), ("masked", MASKED))
    for name, form in rendered_forms(secret).items()
]


def survivors(text: str, secret: str) -> list[str]:
    seen, wanted = as_seen(text), as_seen(secret)
    return [wanted[i : i + 8] for i in range(len(wanted) - 7) if wanted[i : i + 8] in seen]


@pytest.mark.parametrize(("secret", "hidden"), FORMS)
def test_the_reader_sees_each_form_as_the_secret(secret: str, hidden: str) -> None:
    view = reader_view(f"see {hidden} here")
    assert secret in view.text
    start = view.text.index(secret)
    closer = len(hidden) - len(hidden.rstrip("_*")) if not secret.endswith(("_", "*")) else 0
    assert view.source_span(start, start + len(secret)) == (4, 4 + len(hidden) - closer)


@pytest.mark.parametrize(("secret", "hidden"), FORMS)
@pytest.mark.parametrize("form", [Form.MARKDOWN, Form.LINE, Form.TEXT])
def test_the_gate_redacts_each_form_whole(secret: str, hidden: str, form: Form) -> None:
    text = gate(f"see {hidden} here", [MASKED], form=form).text
    assert survivors(text, secret) == []
    assert re.fullmatch(r"see \[REDACTED [a-zA-Z ]+\][_*]* here", text), (
        text
    )  # an emphasis closer may stay


@pytest.mark.parametrize(("secret", "hidden"), FORMS)
def test_json_strings_are_judged_as_read_too(secret: str, hidden: str) -> None:
    document = json.dumps({f"- {hidden}": {"actor": f"x {hidden}"}})
    assert survivors(gate(document, [MASKED], form=Form.JSON).text, secret) == []


@pytest.mark.parametrize(
    ("markdown", "seen"),
    [
        ("> quoted a\\_b\n> more", "quoted a_b\nmore\n"),
        ("- item *a*b\n  next", "item ab\nnext\n"),
        ("a`code`b [link\\_text](https://example.com/x)", "acodeb link_text\n"),
        ("| a | a |\n|---|---|\n| b\\_c | d |", "a\na\nb_c\nd\n"),
        ("```\ncode&#95;\n```\n", "code_\n\n"),  # in code, read with what it spells out
        ("`a\\_b` `c**d**e`", "a_b c**d**e\n"),  # in code: escapes read through, emphasis kept
        ("a\\\\_b a&amp;#95;b", "a_b a_b\n"),  # shown as written, read through by a person
        ("<div>\na&#95;b\n</div>\n", "<div>\na_b\n</div>\n\n"),  # a browser decodes HTML's
        ("\uff46\uff55\uff4c\uff4c\u202e\u034f", "full\n"),  # full-width, bidi, CGJ
    ],
)
def test_what_a_reader_sees(markdown: str, seen: str) -> None:
    view = reader_view(markdown)
    assert view.text == seen
    for index, char in enumerate(view.text):  # every character placed back where it came from
        start, end = view.source_span(index, index + 1)
        assert 0 <= start <= end <= len(markdown)
        if char.isalnum():
            assert char in as_seen(markdown[start:end])


def test_a_table_cell_is_placed_in_its_own_column() -> None:
    markdown = "| x | x |\n|---|---|\n| a | a\\_b |"
    view = reader_view(markdown)
    start = view.text.index("a_b")
    assert markdown[slice(*view.source_span(start, start + 3))] == "a\\_b"


@pytest.mark.parametrize(
    "text",
    [
        "Use `snake_case` names and **bold** words; a_b_c stays.",
        "Escapes \\* and &amp; entities, <b>tags</b> and [links](https://example.com).",
        "naïve café \uff46\uff55\uff4c\uff4c width, and emoji ❤️ with a variation selector",
    ],
)
def test_text_without_secrets_is_kept_as_written(text: str) -> None:
    assert gate(text, [MASKED], form=Form.TEXT).text == text


# A token spelled with escapes or references that a reader sees as written: in code, after a
# doubled backslash, in a table cell whose writer escapes the backslash. A person reads it.
LITERAL = [
    pytest.param(f"`{hidden}`", id=f"in code: {name}")
    for name, hidden in rendered_forms(TOKEN).items()
    if "emphasis" not in name  # in code, emphasis is literal asterisks: not the token
] + [
    pytest.param(f"```\n{rendered_forms(TOKEN)['hex reference']}\n```\n", id="in a fence"),
    pytest.param(TOKEN.replace("_", "\\\\_"), id="doubled backslash"),
    pytest.param(TOKEN.replace("_", "&amp;lowbar;"), id="reference to a reference"),
    pytest.param(
        render_changes_markdown([(f"- {rendered_forms(TOKEN)['backslash escape']}", None)]),
        id="a table cell that doubles the backslash",
    ),
]


@pytest.mark.parametrize("markdown", LITERAL)
def test_a_token_a_reader_sees_spelled_out_is_redacted(markdown: str) -> None:
    assert survivors(gate(markdown, form=Form.MARKDOWN).text, TOKEN) == []


def test_the_job_summary_is_judged_with_its_table_built() -> None:
    escaped = rendered_forms(TOKEN)["backslash escape"]
    summary = SummaryInput(
        agent_name="memory-agent",
        event="push",
        scope_description="the default branch",
        loaded=(),
        restore_hit=False,
        matched_key=None,
        restore_warning=None,
        memory_diff="",
        save_note="",
        review_markdown="",
        approx_tokens=0,
        changes_markdown=render_changes_markdown([(f"- {escaped}", None)]),
    )
    text = safe_summary(summary, []).text
    assert "[REDACTED GitHub token]" in text
    assert survivors(text, TOKEN) == []


def test_emphasis_in_code_is_shown_as_asterisks_and_kept() -> None:
    split = rendered_forms(TOKEN)["** emphasis"]
    assert gate(f"`{split}`", form=Form.MARKDOWN).text == f"`{split}`"


@pytest.mark.parametrize(("secret", "hidden"), FORMS)
def test_a_text_redacted_before_the_gate_keeps_no_piece_a_reader_joins(
    secret: str, hidden: str
) -> None:
    # Outputs and memory are redacted before they reach the gate: that redaction reads as the
    # gate does, or a piece caught as written (the masked value's tail) leaves the rest shown.
    once = redact(f"see {hidden} here", [MASKED])[0]
    assert survivors(gate(once, [MASKED], form=Form.TEXT).text, secret) == []


def test_raw_html_escaped_by_the_gate_is_judged_as_it_then_reads() -> None:
    # The tag is no text to a reader, but once escaped its attribute shows, references decoded.
    tag = f'<a title="{rendered_forms(TOKEN)["decimal reference"]}">x</a>'
    assert survivors(gate(tag, form=Form.MARKDOWN).text, TOKEN) == []
    assert survivors(gate(tag, form=Form.LINE).text, TOKEN) == []
