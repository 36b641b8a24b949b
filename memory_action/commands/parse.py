"""Comment commands to the agent, read from a comment without any model call.

``@<agent_name> remember <text>``, ``@<agent_name> forget <text or item number>``,
``@<agent_name> memory`` and ``@<agent_name> review``: each at the start of a line of a
top-level paragraph, the agent's name in any case. Where that is comes from a CommonMark parser
(markdown-it-py, as GitHub reads the comment): a line in a list item (or its lazy continuation),
a quote, code, a heading, a table, or anywhere inside raw HTML is no command. Whether a paragraph
sits inside an HTML element comes from the rendered comment parsed as a browser parses it
(justhtml, the WHATWG algorithm), never from tags counted by hand: ``<details>`` holds every
paragraph up to its ``</details>``, a stray ``</span>`` closes nothing, and a ``<!--`` left open
hides the rest. A mention in the middle of a sentence,
or one followed by any other word, is no command either: the comment is read as before (a request
to review).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from justhtml import JustHTML, Node
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
    starts = _prose_line_starts("\n".join(marked))
    return [lines[number] for number in candidates if number in starts]


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _prose_line_starts(text: str) -> set[int]:
    """The marked lines of ``text`` that start, as plain text, a line of a paragraph at the
    top level, and that a reader sees there: outside every HTML element."""
    starts = _paragraph_line_starts(_parser().parse(text))
    return starts & _top_level_in_rendered(text) if starts else starts


def _paragraph_line_starts(tokens: Sequence[Token]) -> set[int]:
    """The marked lines that start, as plain text, a line of a top-level paragraph (not in a
    list item or quote, not raw HTML) as CommonMark reads the Markdown."""
    starts: set[int] = set()
    top_paragraph = False
    for token in tokens:
        if token.type == "paragraph_open":
            top_paragraph = token.level == 0
        elif token.type == "inline" and top_paragraph:
            for child, at_line_start in _with_line_starts(token.children or []):
                mark = _LINE_MARK.match(child.content) if child.type == "text" else None
                if mark is not None and at_line_start:
                    starts.add(int(mark[1]))
    return starts


def _with_line_starts(children: Sequence[Token]) -> Iterator[tuple[Token, bool]]:
    """Each inline token, and whether it starts a line (the first, or right after a break)."""
    previous: Token | None = None
    for child in children:
        yield child, previous is None or previous.type in _BREAKS
        previous = child


def _top_level_in_rendered(text: str) -> set[int]:
    """The marked lines whose text a browser puts in a paragraph right under ``<body>``.

    The comment is rendered as CommonMark does (its HTML blocks end exactly where the spec says)
    and the HTML parsed as the WHATWG spec says, so an element left open (``<details>``, a
    ``<!--`` never closed) holds what follows it, and a stray ``</span>`` closes nothing.
    """
    document = JustHTML(_parser().render(text), sanitize=False)
    found: set[int] = set()
    stack: list[Node] = [document.root]
    while stack:
        node = stack.pop()
        if node.name == "#text":
            parent = node.parent
            if parent is not None and parent.name == "p" and _under_body(parent):
                found.update(int(mark[1]) for mark in _LINE_MARK.finditer(str(node.data)))
        else:
            stack.extend(node.children or ())
    return found


def _under_body(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.name == "body" and parent.namespace == "html"


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
