"""Comment commands to the agent, read from a comment without any model call.

``@<agent_name> remember <text>``, ``@<agent_name> forget <text or item number>``,
``@<agent_name> memory`` and ``@<agent_name> review``: each at the start of a line of a
top-level paragraph, the agent's name in any case. Where that is comes from a CommonMark parser
(markdown-it-py, as GitHub reads the comment): a line in a list item (or its lazy continuation),
a quote, code, a heading, a table, or anywhere inside raw HTML (an HTML block, or the paragraphs
between ``<details>`` and its ``</details>``) is no command. A mention in the middle of a sentence,
or one followed by any other word, is no command either: the comment is read as before (a request
to review).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

MAX_COMMANDS = 10  # one comment's; the reply names the ones left over


class Verb(enum.StrEnum):
    REMEMBER = "remember"
    FORGET = "forget"
    MEMORY = "memory"
    REVIEW = "review"


MEMORY_VERBS = frozenset({Verb.REMEMBER, Verb.FORGET, Verb.MEMORY})

# "@name verb rest": up to three spaces before (four make code), a comma or colon after the
# name, the verb as a whole word; "rest" loses a leading colon ("remember: x").
_COMMAND = re.compile(
    r"[ \t]{0,3}@(?P<name>[A-Za-z0-9._-]+)[,:]?[ \t]+"
    r"(?P<verb>[A-Za-z]+)(?![\w-])[ \t]*:?(?P<rest>.*)"
)
# A candidate line's "@" becomes "<open>n<close>" before parsing, so the tokens tell which line
# starts prose; characters of the private use area a comment cannot forge (they are taken out).
_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_LINE_MARK = re.compile(f"{_MARK_OPEN}([0-9]+){_MARK_CLOSE}")
# HTML tags, to know whether a paragraph sits inside an element left open (``<details>``).
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_TAG = re.compile(r"<(?P<close>/)?(?P<name>[A-Za-z][A-Za-z0-9-]*)[^<>]*?(?P<self>/)?>")
_VOID_ELEMENTS = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    ]
)
_BREAKS = ("softbreak", "hardbreak")


@dataclass(frozen=True, kw_only=True)
class Command:
    verb: Verb
    argument: str  # the rest of the line, stripped ("" for memory and review)
    line: str  # as written, for the reply

    @property
    def changes_memory(self) -> bool:
        return self.verb in (Verb.REMEMBER, Verb.FORGET)


@dataclass(frozen=True, kw_only=True)
class Commands:
    """The commands of one comment, in order, and how many past ``MAX_COMMANDS`` were left."""

    found: tuple[Command, ...]
    left_over: int = 0

    @property
    def for_memory(self) -> tuple[Command, ...]:
        return tuple(c for c in self.found if c.verb in MEMORY_VERBS)

    @property
    def asks_review(self) -> bool:
        return any(c.verb is Verb.REVIEW for c in self.found)


def parse_commands(body: str, agent_name: str) -> Commands:
    """The commands to ``agent_name`` in a comment ``body`` (see the module docstring)."""
    found: list[Command] = []
    for line in command_lines(body):
        command = _command(line, agent_name)
        if command is not None:
            found.append(command)
    return Commands(found=tuple(found[:MAX_COMMANDS]), left_over=max(0, len(found) - MAX_COMMANDS))


def command_lines(body: str) -> list[str]:
    """The lines of ``body`` that may hold a command: shaped like one, and starting a line of a
    top-level paragraph with plain text, outside every HTML element left open."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    candidates = [n for n, line in enumerate(lines) if _COMMAND.fullmatch(line.rstrip())]
    if not candidates:
        return []
    marked = [line.replace(_MARK_OPEN, "\ufffd").replace(_MARK_CLOSE, "\ufffd") for line in lines]
    for number in candidates:
        marked[number] = marked[number].replace("@", f"{_MARK_OPEN}{number}{_MARK_CLOSE}", 1)
    starts = _prose_line_starts(_parser().parse("\n".join(marked)))
    return [lines[number] for number in candidates if number in starts]


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _prose_line_starts(tokens: Sequence[Token]) -> set[int]:
    """The marked lines that start, as plain text, a line of a paragraph at the top level (not
    in a list item or quote) while no HTML element is open."""
    starts: set[int] = set()
    open_elements = 0
    top_paragraph = False
    for token in tokens:
        if token.type == "html_block":
            open_elements = _still_open(open_elements, token.content)
        elif token.type == "paragraph_open":
            top_paragraph = token.level == 0
        elif token.type == "inline" and top_paragraph:
            for child, at_line_start in _with_line_starts(token.children or []):
                if child.type == "html_inline":
                    open_elements = _still_open(open_elements, child.content)
                elif child.type == "text" and at_line_start and not open_elements:
                    mark = _LINE_MARK.match(child.content)
                    if mark is not None:
                        starts.add(int(mark[1]))
    return starts


def _with_line_starts(children: Sequence[Token]) -> Iterator[tuple[Token, bool]]:
    """Each inline token, and whether it starts a line (the first, or right after a break)."""
    previous: Token | None = None
    for child in children:
        yield child, previous is None or previous.type in _BREAKS
        previous = child


def _still_open(open_elements: int, html: str) -> int:
    """How many HTML elements are open after ``html``, given ``open_elements`` before it."""
    for tag in _HTML_TAG.finditer(_HTML_COMMENT.sub("", html)):
        if tag["close"]:
            open_elements = max(0, open_elements - 1)
        elif not tag["self"] and tag["name"].casefold() not in _VOID_ELEMENTS:
            open_elements += 1
    return open_elements


def _command(line: str, agent_name: str) -> Command | None:
    match = _COMMAND.fullmatch(line.rstrip())
    if match is None or match["name"].casefold() != agent_name.casefold():
        return None
    try:
        verb = Verb(match["verb"].casefold())
    except ValueError:
        return None  # "@agent thanks": a mention, not a command
    argument = match["rest"].strip()
    if verb in (Verb.MEMORY, Verb.REVIEW) and argument:
        argument = ""  # "@agent review please": the words after it change nothing
    return Command(verb=verb, argument=argument, line=line.strip())
