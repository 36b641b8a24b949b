"""Reading comment commands: only at the start of a prose line, the agent's name in any case."""

from __future__ import annotations

import pytest

from memory_action.commands.parse import MAX_COMMANDS, Verb, parse_commands


def verbs(body: str, agent: str = "memory-agent") -> list[tuple[Verb, str]]:
    return [(c.verb, c.argument) for c in parse_commands(body, agent).found]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("@memory-agent remember We use tenacity.", [(Verb.REMEMBER, "We use tenacity.")]),
        ("@Memory-Agent REMEMBER: We use tenacity.", [(Verb.REMEMBER, "We use tenacity.")]),
        ("@memory-agent, forget tenacity", [(Verb.FORGET, "tenacity")]),
        ("@memory-agent memory", [(Verb.MEMORY, "")]),
        ("@memory-agent memory please", [(Verb.MEMORY, "")]),
        ("  @memory-agent review", [(Verb.REVIEW, "")]),
        ("Thanks!\n\n@memory-agent forget 3\nand more", [(Verb.FORGET, "3")]),
        (
            "@memory-agent remember a\n@memory-agent forget b",
            [
                (Verb.REMEMBER, "a"),
                (Verb.FORGET, "b"),
            ],
        ),
    ],
)
def test_commands_at_the_start_of_a_prose_line(body: str, expected: list[tuple[Verb, str]]) -> None:
    assert verbs(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "Could @memory-agent remember this?",  # a mention in a sentence
        "```\n@memory-agent remember this\n```",  # a code block
        "~~~md\n@memory-agent remember this\n~~~",
        "    @memory-agent remember this",  # indented code
        "> @memory-agent remember this",  # a quote of someone's command
        "> quoted\n> @memory-agent remember this",
        "- @memory-agent remember this",  # a list item does not start the line with it
        "# @memory-agent remember this",  # a heading
        "<details>\n@memory-agent remember this\n</details>",  # raw HTML
        "@memory-agent remembers this",  # another word
        "@memory-agent thanks",
        "@memory-agent-2 remember this",  # another agent
        "`@memory-agent remember this`",
    ],
)
def test_no_command(body: str) -> None:
    assert verbs(body) == []


@pytest.mark.parametrize(
    "body",
    [
        # inside an HTML element: the paragraphs between <details> and </details> too
        "<details>\n\n@memory-agent remember this\n\n</details>",
        "<details><summary>why</summary>\n\n@memory-agent remember this\n</details>",
        "Notes:\n\n<div>\n\n@memory-agent remember this\n\n</div>",
        "<div>\n\n@memory-agent remember this",  # never closed
        "hi <span>\n@memory-agent remember this</span>",
        # a list item, its continuation line and its lazy continuation
        "- item\n  @memory-agent remember this",
        "- item\n@memory-agent remember this",
        "* item\n\n  @memory-agent remember this",
        # an ordered list's paragraphs
        "1. item\n   @memory-agent remember this",
        "1. item\n\n   @memory-agent remember this",
        "2) @memory-agent remember this",
        # a quote's lazy continuation, a code span across lines, a table row
        "> quoted\n@memory-agent remember this",
        "see `a\n@memory-agent remember this` b",
        "| a | b |\n| - | - |\n@memory-agent remember this",
        "@memory-agent remember this\n===",  # a heading
    ],
)
def test_no_command_where_commonmark_reads_no_top_level_paragraph(body: str) -> None:
    assert verbs(body) == []


@pytest.mark.parametrize(
    "body",
    [
        # a stray closing tag closes nothing: the paragraph is still inside <details>
        "<details>\n<summary>report</summary>\n\n</span>\n\n@memory-agent remember X\n\n</details>",
        "<details>\n\n</div>\n\n@memory-agent remember X\n\n</details>",
        "<details>\n\n</span></div></p>\n\n@memory-agent remember X",
        "<details>\n\nsee </span> here\n\n@memory-agent remember X\n\n</details>",
        "<details>\n\n</summary>\n\n@memory-agent remember X\n\n</details>",
        # one </details> closes the inner of two
        "<details>\n<details>\n\nin\n\n</details>\n\n@memory-agent remember X\n\n</details>",
        # an HTML comment the block left open hides everything after it
        "<details><!--\n\n@memory-agent remember X",
        "<div>hi <!-- a\n\n@memory-agent remember X\n\n</div>",
        # an HTML block that runs to its own end condition, blank lines and all
        "<pre>\n\n@memory-agent remember X\n\n</pre>",
        "<!--\n\n@memory-agent remember X\n\n-->",
        "<script>\n\n@memory-agent remember X\n</script>",
        "<textarea>\n\n@memory-agent remember X\n\n</textarea>",
        # elements whose text is not a paragraph's, whatever the Markdown says
        "<template>\n\n@memory-agent remember X\n\n</template>",
        "<noscript>\n\n@memory-agent remember X\n\n</noscript>",
        "<DETAILS>\n\n@memory-agent remember X\n\n</Details >",
        "<blockquote>\n\n@memory-agent remember X\n\n</blockquote>",
        "hi <b>\n@memory-agent remember X\n\n</b>",
    ],
)
def test_no_command_inside_what_a_reader_sees_as_html(body: str) -> None:
    assert verbs(body) == []


@pytest.mark.parametrize(
    "body",
    [
        "<details>\n\n</span>\n\nreport\n\n</details>\n\n@memory-agent forget 2",
        "<details><summary>s</summary>log</details>\n\n@memory-agent forget 2",
        "<DETAILS>\n\nlog\n\n</details>\n\n@memory-agent forget 2",
        "<!--\n\nnote\n\n-->\n\n@memory-agent forget 2",
        "<pre>\n\ncode\n</pre>\n\n@memory-agent forget 2",
        "</span>\n\n@memory-agent forget 2",  # a stray closing tag opens nothing either
        "<p>\n\n@memory-agent forget 2",  # a new paragraph closes the one left open
        "hi </b>\n@memory-agent forget 2",
    ],
)
def test_a_command_once_every_element_before_it_is_closed(body: str) -> None:
    assert verbs(body) == [(Verb.FORGET, "2")]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<details>\n<summary>s</summary>\n\nlog\n\n</details>\n\n@memory-agent forget 2", "2"),
        ("<!-- a note -->\n@memory-agent forget 2", "2"),
        ("- item\n\n@memory-agent forget 2", "2"),  # the list ended at the blank line
        ("> quoted\n\n@memory-agent forget 2", "2"),
        ("hi <br>\n@memory-agent forget 2", "2"),  # a void element opens nothing
        # private-use characters in the comment cannot pass a code span's line for prose
        ("\ue0001\ue001 x\n`@memory-agent remember y`\n@memory-agent forget 2", "2"),
    ],
)
def test_a_command_after_html_lists_and_quotes_that_ended(body: str, expected: str) -> None:
    assert verbs(body) == [(Verb.FORGET, expected)]


def test_another_agents_name() -> None:
    assert verbs("@Reviewer remember x", agent="reviewer") == [(Verb.REMEMBER, "x")]
    assert verbs("@memory-agent remember x", agent="reviewer") == []


def test_commands_past_the_limit_are_counted_not_dropped_silently() -> None:
    body = "\n".join(f"@memory-agent remember fact {n}" for n in range(MAX_COMMANDS + 2))
    found = parse_commands(body, "memory-agent")
    assert len(found.found) == MAX_COMMANDS
    assert found.left_over == 2
