"""What the agent answers to comment commands: short, and safe to post.

Everything taken from memory, its provenance or the comment is shown as inline code of one
cleaned line (``proposals.shown_line``), so nothing in it can mention anyone, act as HTML, or
start a line with a command; the whole reply loses our markers (``break_markers``) and is
posted only through the outgoing gate (``outgoing.gate``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from memory_action.commands.parse import Verb
from memory_action.memory.items import Item, items
from memory_action.memory.proposals import shown_line
from memory_action.memory.provenance import Provenance
from memory_action.safety.outgoing import Form, gate
from memory_action.safety.untrusted_markdown import break_markers, code_span

MAX_LISTING_CHARS = 50_000  # of one ``memory`` answer; a comment holds 65,536
GIT_HINT = (
    "To let comment commands change memory here, set `memory_store: git` and grant the "
    "workflow `permissions: contents: write`: memory then lives on the branch "
    "`memory-agent-memory`, which a comment run may commit to."
)


LEFT_OVER: Final = "more"  # the heading of the answer about commands past the limit (no verb's own)


@dataclass(frozen=True, kw_only=True)
class Answer:
    verb: Verb | Literal["more"]  # the command answered, or ``LEFT_OVER``
    text: str
    done: bool  # what was asked was done (or answered)


def shown(text: str, masked: Iterable[str] = ()) -> str:
    """``text`` as inline code of one cleaned, shortened line, its secrets redacted first: cut
    short, a token is no longer one the gate could recognise at the exit."""
    return code_span(shown_line(gate(text, masked, form=Form.TEXT).text))


def not_a_writer() -> str:
    return (
        "Thanks! Only people with write access to this repository can change or read my "
        "memory, so nothing was changed."
    )


def cannot_keep(reason: str) -> str:
    return f"I cannot keep this: {reason}. Nothing was changed. {GIT_HINT}"


def candidates(
    wanted: str, found: tuple[Item, ...], text: str, agent: str, masked: Iterable[str] = ()
) -> str:
    numbers = {item.index: number for number, item in enumerate(items(text), 1)}
    lines = [f"{numbers[item.index]}. {shown(item.text)}" for item in found]
    return (
        f"More than one item could be {shown(wanted, masked)}, so nothing was forgotten. "
        "The closest:\n\n"
        + "\n".join(lines)
        + f"\n\nSay which one with `@{agent} forget <number>` (or its exact text)."
    )


def listing(text: str, provenance: Provenance, where: str, masked: Iterable[str] = ()) -> str:
    listed = items(text)
    if not listed:
        return f"My memory ({where}) is empty."
    lines = [f"I remember {len(listed)} items ({where}):", ""]
    size = 0
    for number, item in enumerate(listed, 1):
        stamp = provenance.records.get(item.text)
        # Provenance is restored, untrusted text ("@actor", or anything a tampered sidecar holds).
        origin = shown(stamp.describe(), masked) if stamp is not None else "origin unknown"
        line = f"{number}. {shown(item.text)} · {origin}"
        size += len(line) + 1
        if size > MAX_LISTING_CHARS:
            lines.append(f"\n_…and {len(listed) - number + 1} more, left out to fit._")
            break
        lines.append(line)
    return "\n".join(lines)


def reply_body(answers: list[Answer]) -> str:
    """One reply for every answer, in the order of the commands."""
    if len(answers) == 1:
        return break_markers(answers[0].text)
    return break_markers("\n\n".join(f"**{a.verb}** · {a.text}" for a in answers))
