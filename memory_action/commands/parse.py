"""Comment commands to the agent, read from a comment without any model call.

``@<agent_name> remember <text>``, ``@<agent_name> forget <text or item number>``,
``@<agent_name> memory`` and ``@<agent_name> review``: each at the start of a line of prose
(``untrusted_markdown.prose_lines``: never in code, a quote or raw HTML), the agent's name in
any case. A mention in the middle of a sentence, or one followed by any other word, is no
command: the comment is read as before (a request to review).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from memory_action.untrusted_markdown import prose_lines

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


@dataclass(frozen=True)
class Command:
    verb: Verb
    argument: str  # the rest of the line, stripped ("" for memory and review)
    line: str  # as written, for the reply

    @property
    def changes_memory(self) -> bool:
        return self.verb in (Verb.REMEMBER, Verb.FORGET)


@dataclass(frozen=True)
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
    for line in prose_lines(body):
        command = _command(line, agent_name)
        if command is not None:
            found.append(command)
    return Commands(tuple(found[:MAX_COMMANDS]), max(0, len(found) - MAX_COMMANDS))


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
    return Command(verb, argument, line.strip())
