"""The one exception tree of memory-agent.

Every expected failure is a ``MemoryActionError``; ``main()`` is the only place that turns one
into an ``::error::`` line and an exit code (never a traceback)::

    MemoryActionError            exit code  meaning
    ├── InputError                   2      an ``INPUT_*`` value or CLI flag is invalid
    ├── EventError                   3      the event file is missing, unreadable or malformed
    ├── MemoryFileError              4      a memory source is not UTF-8, too large or unreadable
    ├── AgentError                   5      the model failed, timed out or never answered
    └── GitHubError                  6      a GitHub API call the run depends on failed

``CacheError`` is deliberately *not* a ``MemoryActionError``: cache trouble never fails a job,
stores catch it and report a warning. An event the action does not handle is not an error:
``UnsupportedEvent`` ends the run with a notice and exit code 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """A setting named in a message. The action calls it an input (``max_memory_kb``), the CLI a
    flag or a variable (``--max-memory-kb``): a message keeps the setting, each interface
    renders the name in its own words."""

    name: str  # the action's input name
    lead: bool = False  # the subject that opens the message ("Input 'max_memory_kb' has …")
    value: str | None = None  # the value it has, shown as the user gives it ("name: value")


Words = tuple["str | Setting", ...]
Naming = Callable[[Setting], str]


def input_words(setting: Setting) -> str:
    """How the action names a setting: its input (with a value, as a workflow's ``with:``
    gives it)."""
    if setting.value is not None:
        return f"{setting.name}: {setting.value}"
    return f"Input '{setting.name}'" if setting.lead else f"the {setting.name} input"


def render(words: Words, naming: Naming = input_words) -> str:
    return "".join(part if isinstance(part, str) else naming(part) for part in words)


class MemoryActionError(Exception):
    """An expected failure: reported as one ``::error::`` line, never as a traceback.

    The message is text, or ``Words`` that name settings: ``str()`` is the action's wording,
    ``in_words`` another interface's."""

    exit_code = 1

    def __init__(self, message: str | Words = "") -> None:
        self.words: Words = (message,) if isinstance(message, str) else message
        super().__init__(render(self.words))

    def in_words(self, naming: Naming) -> str:
        return render(self.words, naming)


class InputError(MemoryActionError):
    """An input has a bad value; the message names the input, the value and what is accepted."""

    exit_code = 2


class EventError(MemoryActionError):
    """The event payload cannot be read or does not have the fields the event must have."""

    exit_code = 3


class MemoryFileError(MemoryActionError):
    """A memory source cannot be used: not UTF-8, over ``max_memory_kb``, or unreadable."""

    exit_code = 4


class AgentError(MemoryActionError):
    """The agent run did not finish: model error, timeout, or no final answer."""

    exit_code = 5


class GitHubError(MemoryActionError):
    """A GitHub API call the run cannot do without failed."""

    exit_code = 6


class UnsupportedEvent(Exception):  # noqa: N818 - it is an outcome, not an error
    """The workflow event is not one the action handles; the run ends with a notice, exit 0."""


class CacheError(Exception):
    """A cache service failure. Stores catch it and warn; it never fails the job."""
