"""The one exception tree of memory-agent.

Every exception memory-agent raises on purpose is a ``MemoryActionException``, placed below by
what it means. What ends the run (``RunEnding``) is caught only by the entry points
(``main.main``, the ``memory-agent`` command), and ``exit_for`` is the one place that turns it
into a message and an exit code (never a traceback); each interface passes its own naming of
settings (``input_words``, ``local.words.cli_words``). Every other branch is caught by the caller
of what raised it, which carries on without it::

    MemoryActionException               exit code  meaning
    ├── RunEnding                                  ends the run: only the entry points catch it
    │   ├── UnsupportedEvent                0      an outcome, not an error: an event the action
    │   │                                          does not handle ends the run with a notice
    │   └── MemoryActionError               1      an expected failure: one ``::error::`` line
    │       ├── InputError                  2      an ``INPUT_*`` value or CLI flag is invalid
    │       ├── EventError                  3      the event file is missing, unreadable or bad
    │       ├── MemoryFileError             4      a memory source is not UTF-8, too large or
    │       │                                      unreadable
    │       ├── AgentError                  5      the model failed, timed out or never answered
    │       │   ├── AgentRunError                  (agent.runner) no usable answer
    │       │   ├── UnusableAnswerError            (review.answer) a batch's answer did not parse
    │       │   ├── RequestTooLargeError           (review.limits) over the provider's limit
    │       │   └── DailyQuotaError                (review.limits) the daily quota is used up
    │       └── GitHubError                 6      a GitHub API call the run depends on failed
    ├── CacheError                                 cache trouble: stores warn, it never fails a
    │   │                                          job
    │   ├── ServiceError                           (store.cache_protocol, its branch drawn there)
    │   └── ArchiveError                           (store.archive) a corrupt, malicious or too
    │                                              large archive
    ├── GitRemoteError                             (store.git_remote) GitHub did not do a git
    │   │                                          data call: the git store warns, the CLI says so
    │   ├── StaleHeadError                         the branch moved: read again and retry
    │   └── WriteRefusedError                      refused for good this run (protection or
    │                                              permission): no further write is tried
    ├── CommentPermissionError                     (github.pull_request) the token may not comment:
    │                                              the review goes to the job summary
    └── InvalidProposalError                       (memory.proposals) a proposal that breaks the
                                                   block's rules: read as no proposal

Not in the tree, on purpose: private signals that never leave their module (``agent.runner``'s
``_Cancelled`` and ``_ModelCallError``; ``store.local``'s ``_CorruptEntry``, ``_Refused`` and
``_NotRegular``; ``memory.tools``' ``_Refused`` and ``_SecretRefused``, whose message goes back to
the model); and the built-in ``ValueError``, ``TypeError`` and ``KeyError``, which say a caller
broke a function's contract (a bug), or which a parser of untrusted text raises and turns into
"none" itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
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


class MemoryActionException(Exception):  # noqa: N818 - the root of errors and outcomes alike
    """Every exception memory-agent raises on purpose (see the tree above)."""


class RunEnding(MemoryActionException):
    """Ends the run: only the entry points catch it, and ``exit_for`` says how it ends."""

    exit_code = 1


class MemoryActionError(RunEnding):
    """An expected failure: reported as one ``::error::`` line, never as a traceback.

    The message is text, or ``Words`` that name settings: ``str()`` is the action's wording,
    ``in_words`` another interface's."""

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


class UnsupportedEvent(RunEnding):
    """The workflow event is not one the action handles; the run ends with a notice, exit 0."""

    exit_code = 0


class CacheError(MemoryActionException):
    """A cache service failure. Stores catch it and warn; it never fails the job."""


@dataclass(frozen=True, kw_only=True)
class Exit:
    """How a run that raised a ``RunEnding`` ends."""

    code: int  # the process exit code
    message: str  # settings named in the interface's words
    failed: bool  # an error; else an outcome, told as a notice


def exit_for(ending: RunEnding, naming: Naming = input_words) -> Exit:
    """The message and exit code of ``ending``, settings named by ``naming``: the one place
    where an exception becomes what a person reads."""
    if isinstance(ending, MemoryActionError):
        return Exit(code=ending.exit_code, message=ending.in_words(naming), failed=True)
    return Exit(
        code=ending.exit_code,
        message=f"memory-agent does not handle {ending}; nothing to do.",
        failed=False,
    )
