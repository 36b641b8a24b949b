"""A pull request's memory changes as a proposal people can veto, and the block that carries it.

A PR run learns things; they become committed memory only when the PR is merged (design.md,
"Scope and trust"). The trusted run on the base branch cannot read the PR's cache scope, so the
proposal travels in the agent's sticky comment, twice:

- a **checklist** people read: one task-list line per change (a hunk of the line diff from the
  committed memory the run started from), ``- [x] <!-- memory-agent:item ID --> **add** `…```.
  Items of a trusted run are ticked by default, so unticking vetoes one; items of an untrusted
  run (a fork's content, input from someone without write access) are not, so a maintainer ticks
  the ones to accept.
  Ticking a box edits the comment, which needs write access to the repository.
- a hidden **block** machines read: ``<!-- memory-agent:proposal v1 AGENT`` + the base64 of
  zlib-compressed JSON (the base, the items with their full lines, a sha256 digest) + ``-->``.

After the merge, the trusted run reads the comment, ``decode_block`` → ``checked_items`` →
``apply_items`` (``merge3`` when the committed memory moved on since ``base``), and saves.

**Trust.** The comment body is untrusted input to the reading run: ``decode_block`` checks sizes,
types, the digest, that each item's id is derived from its content, and that the items apply to
the base; anything odd is ``None``. The digest catches corruption, not forgery: whoever may edit
the comment may tick boxes anyway. The model cannot forge a block or a checkbox: everything the
model wrote passes ``report.break_markers`` (``report.render_comment``), and the item text shown
in the checklist has every ``<`` broken. ``checked_items`` counts an item only when every line
carrying its marker is a ticked task-list line, so a second, forged line can only veto.

**Two blocks.** If the body holds more than one block of the agent (any version), that is no
comment we rendered: ``decode_block`` returns ``None`` and nothing is promoted.

**Size.** ``render_proposal`` returns the checklist and the block within a budget (default
``report.PROPOSAL_LIMIT``; ``report.render_comment`` never cuts them). When everything does not
fit, it keeps the first N items in both the checklist and the block, and says how many changes
were left out: those are not promoted (a change nobody could see cannot be vetoed). When not even
one item fits, it returns a note and no block. A block is always complete or absent.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
import re
import unicodedata
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from memory_action.errors import MemoryActionException
from memory_action.memory.markers import AGENT_NAME
from memory_action.memory.trust import Trust
from memory_action.safety import untrusted_json
from memory_action.safety.untrusted_json import first_error, location
from memory_action.safety.untrusted_markdown import code_span, safe_markdown

Stamp = dict[str, str | int | None]

BLOCK_PREFIX = "<!-- memory-agent:proposal "
ITEM_PREFIX = "<!-- memory-agent:item "
FORMAT = "memory-agent/proposal"
VERSION = 1
HEADING = "#### Proposed memory changes"

MAX_BLOCK_CHARS = 200_000  # the base64 text of one block, line breaks included
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # decompressed: memory may be up to 1 MiB, JSON escapes it
MAX_ITEMS = 500
MAX_LINE_BYTES = 4_096  # one line of an item, UTF-8
MAX_STAMP_KEYS = 16
MAX_STAMP_VALUE = 1_024
SHOWN_CHARS = 100  # of one line in the checklist; the block keeps the full line
_WRAP = 76
# The proposal (checklist + block) of a comment; the fixed rest of the comment (marker, header, a
# note of at most 1,000 characters escaped, footer) stays under 10,000, so the review and diff can
# always be cut to make the comment fit (``report.render_comment``).
PROPOSAL_LIMIT = 40_000
_MAX_INT = 2**53  # what a JSON number may hold for every reader

_ID = re.compile(r"[0-9a-f]{10}")
_STAMP_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_BLOCK_START = re.compile(r"<!-- memory-agent:proposal ([^\r\n]*)\r?\n")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
# A task-list line carrying an item marker; the marker right after the box, as we render it.
_TASK = re.compile(r" {0,3}[-*+][ \t]+\[([ xX])\][ \t]+<!-- memory-agent:item ([0-9a-f]{10}) -->")
_ZWSP = "\u200b"
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@dataclass(frozen=True, kw_only=True)
class ProposalItem:
    """One change: base lines ``[base_start, base_end)`` (``removed``) become ``added``.

    Lines keep their ``"\\n"`` (only the last line of a text may lack one), so applying every
    item of a proposal gives the new text exactly.
    """

    id: str
    base_start: int
    base_end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    trusted: bool
    stamp: Stamp | None = field(default=None, hash=False)

    @property
    def kind(self) -> str:
        if not self.removed:
            return "add"
        return "remove" if not self.added else "change"


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """What one agent's run of a PR would change in the committed memory ``base``."""

    agent: str
    pr: int | None
    base: str
    items: tuple[ProposalItem, ...]


class InvalidProposalError(MemoryActionException):
    """A proposal (or block) that does not keep this module's rules."""


# --- building and applying ----------------------------------------------------------------------


def build_proposal(
    agent: str,
    pr: int | None,
    base: str,
    new: str,
    *,
    trusted: bool,
    stamp: Mapping[str, str | int | None] | None = None,
    origins: Mapping[str, Mapping[str, str | int | None]] | None = None,
) -> Proposal:
    """The changes from ``base`` to ``new``: one item per hunk of the line diff, split where
    its added lines come from different runs.

    ``origins`` maps an entry (a stripped line) to the stamp of the run that wrote it (the
    memory's provenance); a line without one is this run's (``stamp``). Lines belong to one
    item only when one run wrote them: a comment command's line is its own item, beside an
    agent's, so each can be vetoed alone, and an untrusted run's line is never ticked because
    a trusted line shares its item.
    """
    _check_agent(agent)
    _check_pr(pr)
    if stamp is not None:
        _check_stamp(stamp)
    old_lines, new_lines = _lines(base), _lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines)
    known = origins or {}
    hunks: list[tuple[int, int, tuple[str, ...], tuple[str, ...], Stamp | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        groups = _by_origin(new_lines[j1:j2], known, stamp)
        removed = tuple(old_lines[i1:i2])
        first, *rest = groups or [((), dict(stamp) if stamp is not None else None)]
        hunks.append((i1, i2, removed, *first))
        hunks += [(i2, i2, (), added, origin) for added, origin in rest]
    ids = _item_ids([(removed, added) for _, _, removed, added, _ in hunks])
    items = tuple(
        ProposalItem(
            id=item_id,
            base_start=start,
            base_end=end,
            removed=removed,
            added=added,
            trusted=trusted and (origin or {}).get("trust") != Trust.UNTRUSTED.value,
            stamp=origin,
        )
        for item_id, (start, end, removed, added, origin) in zip(ids, hunks, strict=True)
    )
    return Proposal(agent=agent, pr=pr, base=base, items=items)


def _by_origin(
    lines: list[str],
    origins: Mapping[str, Mapping[str, str | int | None]],
    own: Mapping[str, str | int | None] | None,
) -> list[tuple[tuple[str, ...], Stamp | None]]:
    """``lines`` in runs of the same origin (a blank line goes with the line before it)."""
    groups: list[tuple[tuple[str, ...], Stamp | None]] = []
    for line in lines:
        found = origins.get(line.strip()) if line.strip() else None
        origin = dict(found) if found is not None else dict(own) if own is not None else None
        if groups and (not line.strip() or _same_run(groups[-1][1], origin)):
            groups[-1] = ((*groups[-1][0], line), groups[-1][1])
        else:
            groups.append(((line,), _checked_stamp(origin)))
    return groups


def _same_run(a: Stamp | None, b: Stamp | None) -> bool:
    """Whether two stamps name one run (the time an entry was written does not matter)."""

    def run(stamp: Stamp | None) -> object:
        return None if stamp is None else {k: v for k, v in stamp.items() if k != "time"}

    return run(a) == run(b)


def _checked_stamp(stamp: Stamp | None) -> Stamp | None:
    """A stamp the block can carry (provenance records are checked; this keeps its limits)."""
    if stamp is None:
        return None
    try:
        return _check_stamp(stamp)
    except InvalidProposalError:
        return None


def apply_items(base: str, items: Iterable[ProposalItem]) -> str:
    """``base`` with these items applied and no others; InvalidProposalError when they do not
    apply.

    Items are applied by position, so a base with repeated identical lines is no problem; they
    must not overlap, and each one's ``removed`` must be what the base holds there.
    """
    lines = _lines(base)
    ordered = sorted(dict.fromkeys(items), key=lambda i: (i.base_start, i.base_end))
    out: list[str] = []
    position = 0
    for item in ordered:  # inserts at one place stay in the proposal's order (a stable sort)
        start, end = item.base_start, item.base_end
        if not 0 <= start <= end <= len(lines):
            raise InvalidProposalError(f"item {item.id} is outside the base")
        if start < position:
            raise InvalidProposalError(f"item {item.id} overlaps another item")
        if tuple(lines[start:end]) != item.removed:
            raise InvalidProposalError(f"item {item.id} does not apply to the base")
        out += lines[position:start]
        out += item.added
        position = end
    out += lines[position:]
    return "".join(out)


# --- the checklist ------------------------------------------------------------------------------


def render_checklist(
    proposal: Proposal,
    *,
    pending_note: str | None = None,
    states: Mapping[str, bool] | None = None,
    omitted: int = 0,
) -> str:
    """The Markdown people read and tick: a heading, one task-list line per item, a note.

    An item is ticked when it is trusted, unless ``states`` (``task_states`` of the comment
    this one replaces) knows better: a veto, or a maintainer's tick, outlives the next run.
    ``pending_note`` replaces the sentence about merging (for a run that cannot write);
    ``omitted`` changes that did not fit are announced, not listed.
    """
    known = states or {}
    lines = [HEADING, ""]
    for item in proposal.items:
        ticked = known.get(item.id, item.trusted)
        lines.append(f"- [{'x' if ticked else ' '}] {ITEM_PREFIX}{item.id} --> {_describe(item)}")
    if omitted:
        lines += [
            "",
            f"_{omitted:,} more {_changes(omitted)} did not fit in this comment and will "
            "not be applied._",
        ]
    if not proposal.items and not omitted:
        lines.append("_No changes._")
    lines += ["", _note(proposal, pending_note)]
    return "\n".join(lines)


def _changes(count: int) -> str:
    return "change" if count == 1 else "changes"


def _note(proposal: Proposal, pending_note: str | None) -> str:
    if pending_note is not None:
        first = safe_markdown(" ".join(pending_note.split()))
    else:
        first = (
            "Ticked items become committed memory when this pull request is merged; untick an "
            "item to veto it."
        )
    if any(not item.trusted for item in proposal.items):
        first += (
            " Unticked items come from an untrusted run: a maintainer ticks the ones to accept."
        )
    return f"<sub>{first}</sub>"


def _describe(item: ProposalItem) -> str:
    removed, added = _side(item.removed), _side(item.added)
    if item.kind == "add":
        return f"**add** {added}"
    if item.kind == "remove":
        return f"**remove** {removed}"
    if removed == added:  # whitespace, a line ending, or what shortening hid
        return f"**change** {added} _(a difference not shown here)_"
    return f"**change** {removed} → {added}"


def _side(lines: tuple[str, ...]) -> str:
    """Every line, each shown safely, on one task-list line: nothing asked to be kept is
    hidden from the person who may veto it."""
    return "<br>".join(
        code_span(shown_line(line)) if line.strip() else "_(blank line)_" for line in lines
    )


def shown_line(line: str) -> str:
    """One line, harmless as inline code: no control or bidi characters, no ``<``, shortened."""
    text = "".join(
        " " if unicodedata.category(c) == "Cc" else "\ufffd" if c in _BIDI else c
        for c in line.rstrip("\r\n")
    ).strip()
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 1].rstrip() + "…"
    # Inline code shows "<" as is; the zero-width space makes it no tag and no marker for a
    # reader that does not see the code span (report.py does the same inside code).
    return text.replace("<", f"<{_ZWSP}")


def task_states(body: str) -> dict[str, bool]:
    """Item id → ticked, from the task-list lines of a comment body.

    An id on several lines is ticked only if all of them are; a line that is not a task-list
    item (no ``- ``, or the marker not right after the box) does not count.
    """
    states: dict[str, bool] = {}
    for line in body.splitlines():
        match = _TASK.match(line)
        if match:
            ticked = match.group(1) != " "
            states[match.group(2)] = states.get(match.group(2), True) and ticked
    return states


def with_task_states(body: str, states: Mapping[str, bool]) -> str:
    """``body`` with the box of every task-list line of an item in ``states`` set as it says."""
    lines = body.split("\n")
    for number, line in enumerate(lines):
        match = _TASK.match(line)
        if match and match.group(2) in states:
            box = match.start(1)
            mark = "x" if states[match.group(2)] else " "
            lines[number] = f"{line[:box]}{mark}{line[box + 1 :]}"
    return "\n".join(lines)


def checked_items(body: str, proposal: Proposal) -> list[ProposalItem]:
    """The items of ``proposal`` whose line in ``body`` is ticked; a missing line is unticked."""
    states = task_states(body)
    return [item for item in proposal.items if states.get(item.id, False)]


# --- the block ----------------------------------------------------------------------------------


def encode_block(proposal: Proposal) -> str:
    """The hidden, machine-readable block.

    InvalidProposalError for a proposal ``decode_block`` would refuse (``fits`` says False).
    """
    payload = _payload(proposal)
    _parse_payload(payload, proposal.agent)  # the same rules the reader applies
    document = {"digest": _digest(payload), "payload": payload}
    data = base64.b64encode(zlib.compress(_canonical(document).encode(), 9)).decode("ascii")
    wrapped = "\n".join(data[i : i + _WRAP] for i in range(0, len(data), _WRAP))
    if len(wrapped) + 1 > MAX_BLOCK_CHARS:
        raise InvalidProposalError(f"the block is over {MAX_BLOCK_CHARS:,} characters")
    return f"{BLOCK_PREFIX}v{VERSION} {proposal.agent}\n{wrapped}\n-->"


def decode_block(body: str, agent: str) -> Proposal | None:
    """The proposal in ``agent``'s block of ``body``; None when there is none, or no valid one.

    Never raises for what ``body`` holds: it is untrusted input (see the module docstring).
    """
    if not AGENT_NAME.fullmatch(agent):
        return None
    ours = [m for m in _BLOCK_START.finditer(body) if m.group(1).rsplit(" ", 1)[-1] == agent]
    if len(ours) != 1 or ours[0].group(1) != f"v{VERSION} {agent}":
        return None
    start = ours[0].end()
    end = body.find("-->", start, start + MAX_BLOCK_CHARS + len("-->"))
    if end == -1:
        return None
    try:
        return _parse_payload(_read_document(body[start:end]), agent)
    except (
        InvalidProposalError,
        ValueError,
        TypeError,
        KeyError,
        RecursionError,
        zlib.error,
        binascii.Error,
    ):
        return None


def _read_document(text: str) -> object:
    """The payload inside the block's text, checked against its digest."""
    if not _BASE64.fullmatch(text):
        raise InvalidProposalError("not base64")
    data = base64.b64decode("".join(text.split()), validate=True)
    inflater = zlib.decompressobj()
    raw = inflater.decompress(data, MAX_PAYLOAD_BYTES)
    if inflater.unconsumed_tail or not inflater.eof or inflater.unused_data:
        raise InvalidProposalError("the payload is too large, cut or followed by data")
    document = untrusted_json.loads(
        raw.decode("utf-8"),
        object_pairs_hook=_no_duplicates,
        parse_constant=_no_constant,
        parse_float=_no_constant,
    )
    checked = _DocumentJson.model_validate(document)  # a ValidationError is a ValueError
    if checked.digest != _digest(checked.payload):
        raise InvalidProposalError("the digest does not match")
    return checked.payload


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise InvalidProposalError("a key appears twice")
    return result


def _no_constant(text: str) -> object:
    raise InvalidProposalError(f"unexpected number {text[:20]!r}")


def _payload(proposal: Proposal) -> dict[str, object]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "agent": proposal.agent,
        "pr": proposal.pr,
        "base": proposal.base,
        "items": [
            {
                "id": item.id,
                "base_start": item.base_start,
                "base_end": item.base_end,
                "removed": list(item.removed),
                "added": list(item.added),
                "trusted": item.trusted,
                "stamp": item.stamp,
            }
            for item in proposal.items
        ],
    }


def _parse_payload(payload: object, agent: str) -> Proposal:
    """A Proposal from decoded JSON, or InvalidProposalError: every field is checked."""
    try:
        fields = _PayloadJson.model_validate(payload)
    except ValidationError as exc:
        first = first_error(exc)
        raise InvalidProposalError(f"{location(first, 'the payload')}: {first['msg']}") from None
    if fields.version != VERSION:
        raise InvalidProposalError("not a v1 proposal")
    if fields.agent != agent:
        raise InvalidProposalError("the proposal of another agent")
    items = tuple(
        ProposalItem(
            id=item.id,
            base_start=item.base_start,
            base_end=item.base_end,
            removed=tuple(item.removed),
            added=tuple(item.added),
            trusted=item.trusted,
            stamp=item.stamp,
        )
        for item in fields.items
    )
    _check_items(_lines(fields.base), items)
    return Proposal(agent=agent, pr=fields.pr, base=fields.base, items=items)


def _check_items(base_lines: list[str], items: tuple[ProposalItem, ...]) -> None:
    """Items as ``build_proposal`` makes them: in order, apart, each applying to the base."""
    ids = _item_ids([(item.removed, item.added) for item in items])
    previous_end = -1
    for item, expected_id in zip(items, ids, strict=True):
        start, end = item.base_start, item.base_end
        if item.id != expected_id:
            raise InvalidProposalError("an item id does not match its content")
        # An insert may follow the item before it at once: lines of another run's, split off.
        follows = start == end == previous_end
        if not (previous_end < start or follows) or not start <= end <= len(base_lines):
            raise InvalidProposalError(f"item {item.id} is out of place")
        if tuple(base_lines[start:end]) != item.removed or item.removed == item.added:
            raise InvalidProposalError(f"item {item.id} does not apply to the base")
        at_end = end == len(base_lines)
        if any(not line.endswith("\n") for line in item.added[:-1]) or (
            item.added and not item.added[-1].endswith("\n") and not at_end
        ):
            raise InvalidProposalError(f"item {item.id} would join two lines")
        if start == end == len(base_lines) and base_lines and not base_lines[-1].endswith("\n"):
            raise InvalidProposalError(f"item {item.id} would join two lines")
        previous_end = end


def _item_ids(hunks: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> list[str]:
    """Ids from what a hunk changes (not where), numbered among equal hunks.

    So the same learned line keeps its id when the base moves, and a veto carries over.
    """
    seen: dict[str, int] = {}
    ids: list[str] = []
    for removed, added in hunks:
        content = _canonical([list(removed), list(added)])
        index = seen.get(content, 0)
        seen[content] = index + 1
        ids.append(hashlib.sha256(f"{index}\n{content}".encode()).hexdigest()[:10])
    return ids


# --- size ---------------------------------------------------------------------------------------


def render_proposal(
    proposal: Proposal,
    *,
    pending_note: str | None = None,
    states: Mapping[str, bool] | None = None,
    budget_chars: int = PROPOSAL_LIMIT,
) -> str:
    """Checklist + block within ``budget_chars`` (UTF-16 units); "" when there are no items.

    If all items do not fit, the first N that do are listed and carried, and the rest are
    announced as left out (not promoted). If none fits, a note without a block.
    """
    if not proposal.items:
        return ""
    count = _encodable_prefix(proposal)
    if _render(proposal, count, pending_note, states, budget_chars) is None:
        low, high = 0, count  # _render(low) fits (or low == 0), _render(high) does not
        while high - low > 1:
            middle = (low + high) // 2
            fitting = _render(proposal, middle, pending_note, states, budget_chars) is not None
            low, high = (middle, high) if fitting else (low, middle)
        count = low
    text = _render(proposal, count, pending_note, states, budget_chars) if count else None
    if text is not None:
        return text
    total = len(proposal.items)
    return (
        f"{HEADING}\n\n_This run proposes {total:,} memory {_changes(total)}, too large to show "
        "in this comment; they will not be applied when the pull request is merged._"
    )


def fits(
    proposal: Proposal,
    budget_chars: int = PROPOSAL_LIMIT,
    *,
    pending_note: str | None = None,
    states: Mapping[str, bool] | None = None,
) -> bool:
    """Whether the whole proposal (checklist + block) fits in ``budget_chars`` (UTF-16 units)."""
    if _encodable_prefix(proposal) != len(proposal.items):
        return False
    return _render(proposal, len(proposal.items), pending_note, states, budget_chars) is not None


def _render(
    proposal: Proposal,
    count: int,
    pending_note: str | None,
    states: Mapping[str, bool] | None,
    budget_chars: int,
) -> str | None:
    """Checklist + block of the first ``count`` items, or None when over the budget."""
    part = replace(proposal, items=proposal.items[:count])
    try:
        block = encode_block(part)
    except InvalidProposalError:
        return None
    omitted = len(proposal.items) - count
    checklist = render_checklist(part, pending_note=pending_note, states=states, omitted=omitted)
    text = f"{checklist}\n\n{block}"
    return text if len(text.encode("utf-16-le")) // 2 <= budget_chars else None


def _encodable_prefix(proposal: Proposal) -> int:
    """How many items from the start keep the block's per-item limits."""
    for count, item in enumerate(proposal.items[:MAX_ITEMS]):
        if any(len(line.encode()) > MAX_LINE_BYTES for line in (*item.removed, *item.added)):
            return count
    return min(len(proposal.items), MAX_ITEMS)


# --- small checks -------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines with their ``"\\n"``; split on ``"\\n"`` only, as memory.diff does."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(payload: object) -> str:
    return hashlib.sha256(_canonical(payload).encode()).hexdigest()


def _str(value: str) -> str:
    value.encode()  # UnicodeEncodeError (a ValueError) on a lone surrogate
    return value


def _line(value: str) -> str:
    if not value or "\n" in value[:-1] or len(_str(value).encode()) > MAX_LINE_BYTES:
        raise InvalidProposalError("not a line, or a line over 4 KB")
    return value


def _check_agent(agent: object) -> None:
    if not isinstance(agent, str) or not AGENT_NAME.fullmatch(agent):
        raise InvalidProposalError(f"agent name {agent!r} must match {AGENT_NAME.pattern}")


def _check_pr(pr: object) -> int | None:
    if pr is None:
        return None
    if isinstance(pr, bool) or not isinstance(pr, int) or not 0 < pr <= _MAX_INT:
        raise InvalidProposalError(f"pull request number {pr!r} must be a positive integer")
    return pr


def _check_stamp(stamp: Mapping[str, object]) -> Stamp:
    """``stamp`` if it keeps the rules of a stamp (``InvalidProposalError`` if not)."""
    if len(stamp) > MAX_STAMP_KEYS:
        raise InvalidProposalError(f"a stamp has at most {MAX_STAMP_KEYS} keys")
    checked: Stamp = {}
    for key, value in stamp.items():
        if not isinstance(key, str) or not _STAMP_KEY.fullmatch(key):
            raise InvalidProposalError(f"stamp key {key!r} must match {_STAMP_KEY.pattern}")
        short_text = isinstance(value, str) and len(_str(value)) <= MAX_STAMP_VALUE
        count = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_INT
        if not (short_text or count or value is None):
            raise InvalidProposalError(f"stamp value of {key!r}: a short string, int or null")
        checked[key] = value  # type: ignore[assignment]  # just checked
    return checked


# --- the block's JSON, untrusted: exactly these fields, no coercion ------------------------------

_Text = Annotated[StrictStr, AfterValidator(_str)]
_Line = Annotated[StrictStr, AfterValidator(_line)]
_Count = Annotated[StrictInt, Field(ge=0, le=_MAX_INT)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _DocumentJson(_Strict):
    digest: object
    payload: object  # checked against the digest as it is, then as a ``_PayloadJson``


class _ItemJson(_Strict):
    id: _Text
    base_start: _Count
    base_end: _Count
    removed: list[_Line]
    added: list[_Line]
    trusted: StrictBool
    stamp: Annotated[dict[str, str | int | None], AfterValidator(_check_stamp)] | None


class _PayloadJson(_Strict):
    format: Literal["memory-agent/proposal"]  # FORMAT
    version: _Count
    agent: StrictStr
    pr: Annotated[StrictInt | None, AfterValidator(_check_pr)]
    base: _Text
    items: list[_ItemJson] = Field(max_length=MAX_ITEMS)
