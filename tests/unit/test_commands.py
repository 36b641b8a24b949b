"""Reading comment commands: only at the start of a prose line, the agent's name in any case."""

from __future__ import annotations

import pytest

from memory_action.commands.parse import MAX_COMMANDS, Verb, parse_commands
from memory_action.untrusted_markdown import prose_lines


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


def test_another_agents_name() -> None:
    assert verbs("@Reviewer remember x", agent="reviewer") == [(Verb.REMEMBER, "x")]
    assert verbs("@memory-agent remember x", agent="reviewer") == []


def test_commands_past_the_limit_are_counted_not_dropped_silently() -> None:
    body = "\n".join(f"@memory-agent remember fact {n}" for n in range(MAX_COMMANDS + 2))
    found = parse_commands(body, "memory-agent")
    assert len(found.found) == MAX_COMMANDS
    assert found.left_over == 2


def test_prose_lines_are_paragraph_lines_outside_quotes_and_code() -> None:
    body = "one\ntwo\n\n```\ncode\n```\n\n> quote\n\n- item\n\nthree\r\n"
    assert prose_lines(body) == ["one", "two", "- item", "three"]
