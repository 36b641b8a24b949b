"""The sticky pull request comment and the job summary, rendered from plain data (no I/O).

What the model wrote is untrusted Markdown. ``safe_markdown`` makes it harmless to post:

- ``@user`` and ``@org/team`` outside code become inline code: GitHub notifies everyone mentioned
  in a comment, and a bot should not ping people (``@pytest.fixture`` would ping user "pytest").
  Code spans and fenced blocks are left alone: GitHub does not notify from code.
- Raw HTML outside code is escaped (``&lt;``): an unclosed ``<details>``, ``<!--`` or ``<b>``
  would hide or restyle everything after it, the memory section included. A code fence left
  open is closed (in its list item or quote, if it opened there).
- Inside code, what would still act if GitHub read that code as prose (``<details>``,
  ``<summary>``, HTML blocks at a line start) gets a zero-width space after ``<``: this module's
  reading of the Markdown is close to GitHub's, not identical, and must fail safe.
- ``<!-- memory-agent:`` is broken everywhere (also in the memory diff), so no text we post can
  carry a marker: the sticky comment of one agent cannot be spoofed by another's text. The words
  ``memory-agent:proposal`` and ``memory-agent:item`` are broken too, in prose and in code: the
  model cannot forge the proposal block or a checkbox of ``memory.proposals``.

The comment may carry the proposal of ``memory.proposals`` (a checklist people can veto and a
machine-readable block). It is ours, not the model's, and is inserted verbatim and never cut; it
must stay within ``PROPOSAL_LIMIT`` characters, which leaves the rest of the comment room enough.

Both documents have a size limit; when over it, the memory diff is cut first, then the review,
each with a visible note. The marker, header, proposal and footer are never cut.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

COMMENT_LIMIT = 65_536  # GitHub refuses a longer comment body
# GitHub refuses a step summary over 1 MiB; leave room for the error lines main() may append.
SUMMARY_LIMIT = 1_000_000
AGENT_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
MARKER_PREFIX = "<!-- memory-agent:"
COMMENT_TRUNCATED = "… truncated (see the job summary)"
SUMMARY_TRUNCATED = "… truncated (the job summary has a size limit)"
_NOTE_LIMIT = 1_000  # our own notes are one line; an error message pasted in must not crowd out
# The proposal (checklist + block) of a comment; the fixed rest (marker, header, a note of at most
# _NOTE_LIMIT characters escaped, footer) stays under 10,000, so the review and diff can always
# be cut to make the comment fit.
PROPOSAL_LIMIT = 40_000


@dataclass(frozen=True)
class LoadedSource:
    """One memory source that was injected into the prompt."""

    path: str
    size_bytes: int
    writable: bool


@dataclass(frozen=True)
class SummaryInput:
    """Everything the job summary reports about one run."""

    agent_name: str
    event: str
    scope_description: str
    loaded: Sequence[LoadedSource]
    restore_hit: bool
    matched_key: str | None
    restore_warning: str | None
    memory_diff: str
    save_note: str
    review_markdown: str
    approx_tokens: int
    # The checklist of ``memory.proposals`` (pending proposals of a run that cannot comment).
    proposal_markdown: str = ""
    notes: Sequence[str] = ()  # merges, promotions, refused edits: one line each
    changes_markdown: str = ""  # this run's changed entries with their provenance (a table)
    figures: ReviewFigures | None = None  # what the review covered and cost


@dataclass(frozen=True)
class ReviewFigures:
    """What a review covered and cost, for the comment's footer and the job summary."""

    outcome: str  # reviewed | partial | quota | skipped
    model_calls: int
    tokens_in: int
    tokens_out: int
    files_reviewed: int
    files_skipped: int
    not_reviewed: Sequence[tuple[str, str]] = ()  # (path, why), also files reviewed in part

    def cost_line(self) -> str:
        return (
            f"{self.model_calls} model call{'s' if self.model_calls != 1 else ''}, "
            f"{self.tokens_in:,} tokens in, {self.tokens_out:,} out · "
            f"{self.files_reviewed} file{'s' if self.files_reviewed != 1 else ''} reviewed, "
            f"{self.files_skipped} not"
        )


NOT_REVIEWED_LISTED = 50  # rows of the "not reviewed" list; the rest are counted


def not_reviewed_markdown(figures: ReviewFigures | None) -> str:
    """A collapsed list of the files the review did not cover (or covered in part), with why."""
    if figures is None or not figures.not_reviewed:
        return ""
    rows = [
        f"- {_code(path)}: {_safe_line(why)}"
        for path, why in figures.not_reviewed[:NOT_REVIEWED_LISTED]
    ]
    more = len(figures.not_reviewed) - NOT_REVIEWED_LISTED
    if more > 0:
        rows.append(f"- and {more} more")
    count = len(figures.not_reviewed)
    return (
        f"<details><summary>Not reviewed ({count} file{'s' if count != 1 else ''})</summary>"
        "\n\n" + "\n".join(rows) + "\n\n</details>"
    )


def comment_marker(agent_name: str) -> str:
    """The hidden marker that identifies an agent's sticky comment.

    The closing `` -->`` delimits the name, so the marker of agent "a" is not part of agent "ab"'s.
    """
    if not AGENT_NAME.fullmatch(agent_name):
        raise ValueError(f"agent name {agent_name!r} must match {AGENT_NAME.pattern}")
    return f"{MARKER_PREFIX}sticky agent={agent_name} -->"


def marker_agent(marker: str) -> str | None:
    """The agent name ``comment_marker`` wrote into ``marker``; None for anything else."""
    name = marker.removeprefix(f"{MARKER_PREFIX}sticky agent=").removesuffix(" -->")
    return name if AGENT_NAME.fullmatch(name) and comment_marker(name) == marker else None


# --- the comment --------------------------------------------------------------------------------


def render_comment(
    *,
    agent_name: str,
    review_markdown: str,
    memory_diff: str,
    memory_note: str,
    run_url: str | None,
    proposal_markdown: str = "",
    figures: ReviewFigures | None = None,
) -> str:
    """The sticky comment body: marker, header, review, what was not reviewed, proposal, memory
    changes, footer (with what the review cost).

    At most 65,536 characters. ``proposal_markdown`` (``memory.proposals.render_proposal``) is
    inserted as is and never cut; ValueError when it is over ``PROPOSAL_LIMIT``.
    """
    if _utf16_len(proposal_markdown) > PROPOSAL_LIMIT:
        raise ValueError(f"the proposal is over {PROPOSAL_LIMIT:,} characters")
    proposal = proposal_markdown.strip("\n")
    fields = {
        "marker": comment_marker(agent_name),
        "agent_name": agent_name,
        "footer": _footer(run_url, figures),
    }
    note = _safe_line(memory_note)
    proposal = _blocks(not_reviewed_markdown(figures), proposal)

    def build(review: str, diff: str) -> str:
        memory = _memory_section(note, diff)
        return _template("comment.md", **fields, review=_join(review, proposal), memory=memory)

    review = safe_markdown(review_markdown) or "_The agent wrote no review._"
    diff = break_markers(memory_diff.strip("\n"))
    return _fit(build, review, diff, _Budget(COMMENT_LIMIT, _utf16_len, COMMENT_TRUNCATED))


def _blocks(*blocks: str) -> str:
    """Markdown blocks, each on its own (a blank line between), empty ones left out."""
    return "\n\n".join(block for block in blocks if block)


def _join(review: str, proposal: str) -> str:
    """The review, then the proposal as blocks of their own (a blank line between)."""
    return f"{review}\n\n{proposal}" if proposal else review


def _memory_section(note: str, diff: str) -> str:
    if not diff:
        return f"**Memory:** {note or 'No memory changes.'}"
    details = (
        "<details><summary>Memory changes in this run</summary>\n\n"
        f"{_fenced(diff, 'diff')}\n\n</details>"
    )
    return f"**Memory:** {note}\n\n{details}" if note else details


def _footer(run_url: str | None, figures: ReviewFigures | None = None) -> str:
    text = "memory-agent updates this comment on every run"
    if figures is not None:
        text += f" · {figures.cost_line()}"
    if run_url and re.fullmatch(r"https?://[^\s()<>\[\]]+", run_url):
        return f"{text} · [workflow run]({run_url})"
    return text


# --- the job summary ----------------------------------------------------------------------------


def render_summary(summary: SummaryInput) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY`` (under GitHub's 1 MiB limit)."""
    fields = {
        "agent_name": summary.agent_name,
        "event": _code(summary.event),
        "scope": _safe_line(summary.scope_description),
        "restored": _restored(summary),
        "tokens": f"about {summary.approx_tokens:,} tokens" if summary.approx_tokens else "none",
        "warning": _warning(summary.restore_warning),
        "sources": _sources_table(summary.loaded),
        "save_note": _safe_line(summary.save_note) or "Nothing to save.",
        "notes": _notes(summary.notes),
        "changes": f"\n{summary.changes_markdown.strip()}\n" if summary.changes_markdown else "",
        "figures": _figures_line(summary.figures),
    }

    def build(review: str, diff: str) -> str:
        diff_text = _fenced(diff, "diff") if diff else "No memory changes."
        return _template("summary.md", **fields, review=_join(review, proposal), diff=diff_text)

    review = safe_markdown(summary.review_markdown) or "_The agent wrote no review._"
    diff = summary.memory_diff.strip("\n")
    proposal = _blocks(
        not_reviewed_markdown(summary.figures), summary.proposal_markdown.strip("\n")
    )
    return _fit(build, review, diff, _Budget(SUMMARY_LIMIT, _utf8_len, SUMMARY_TRUNCATED))


def _figures_line(figures: ReviewFigures | None) -> str:
    if figures is None:
        return ""
    return f"\n- **Review:** {figures.outcome} · {figures.cost_line()}"


def _notes(notes: Sequence[str]) -> str:
    return "\n" + "".join(f"- {_safe_line(note)}\n" for note in notes) if notes else ""


def _restored(summary: SummaryInput) -> str:
    if summary.restore_hit and summary.matched_key:
        return f"hit, {_code(summary.matched_key)}"
    return "hit" if summary.restore_hit else "miss"


def _warning(warning: str | None) -> str:
    return f"\n> **Warning:** {_safe_line(warning)}\n" if warning else ""


def _sources_table(loaded: Sequence[LoadedSource]) -> str:
    if not loaded:
        return "No memory loaded."
    rows = [
        f"| {_cell(_code(s.path))} | {_human_size(s.size_bytes)} | "
        f"{'writable' if s.writable else 'read-only'} |"
        for s in loaded
    ]
    return "\n".join(["| Source | Size | Access |", "|---|---:|---|", *rows])


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


# --- making untrusted Markdown safe -------------------------------------------------------------

# A fence line, also inside list items and block quotes (the prefix before the run).
_FENCE = re.compile(r"((?:[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t])))*[ \t]*)(`{3,}|~{3,})(.*)")
_LIST_MARKER = re.compile(r"[-+*]|\d{1,9}[.)]")
# An inline code span: not escaped, not across a blank line (a span never crosses paragraphs).
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(?:[^\n]|\n(?![ \t]*\n))*?(?<!`)\1(?!`)")
# Prose: any raw HTML (a tag, comment, declaration, processing instruction); not an autolink.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])(?![A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>)")
# Code: the HTML that would still act if GitHub read this "code" as prose.
_DETAILS_TAG = re.compile(r"<(?=/?(?:details|summary)\b)", re.I)
_HTML_BLOCK_START = re.compile(
    r"^([ \t>*+\-.)\d]*)<(?=[!?]|(?:pre|script|style|textarea)\b)", re.I | re.M
)
# A GitHub mention with its dotted tail (``@pytest.fixture``); not an e-mail, not escaped.
_MENTION = re.compile(r"(?<![\w`/\\])@[A-Za-z0-9][A-Za-z0-9-]*(?:[./][A-Za-z0-9_][\w-]*)*")
_MARKER_START = re.compile(r"<!--(?=\s*memory-agent:)", re.I)
# The words of the proposal block and its checkboxes (memory.proposals), even without "<!--".
_PROPOSAL_WORD = re.compile(r"memory-agent(?=\s*:\s*(?:proposal|item))", re.I)
_ZWSP = "\u200b"


def safe_markdown(text: str) -> str:
    """Model-written Markdown made safe to post (see the module docstring)."""
    chunks, _ = _split_fences(text.strip())
    safe = "".join(_escape_code(c) if is_code else _safe_prose(c) for is_code, c in chunks)
    return _close_fence(safe)


def break_markers(text: str) -> str:
    """Break every ``<!-- memory-agent:`` with a zero-width space, so it is no marker any more.

    ``memory-agent:proposal`` and ``memory-agent:item`` get one too, wherever they are.
    """
    return _break_proposal_words(_MARKER_START.sub(f"<!-{_ZWSP}-", text))


def _break_proposal_words(text: str) -> str:
    return _PROPOSAL_WORD.sub(lambda m: m.group(0) + _ZWSP, text)


def _safe_prose(text: str) -> str:
    pieces: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [_escape_prose(text[last : span.start()]), _escape_code(span.group(0))]
        last = span.end()
    pieces.append(_escape_prose(text[last:]))
    return "".join(pieces)


def _escape_prose(text: str) -> str:
    text = _break_proposal_words(_TAG_START.sub("&lt;", text))
    return _MENTION.sub(lambda m: f"`{m.group(0)}`", text)


def _escape_code(text: str) -> str:
    """Code as written, but with what could act as HTML if GitHub parsed it as prose broken.

    A zero-width space after ``<`` is invisible in code, and makes it no tag: so a code block
    this module reads differently from GitHub still cannot hide or wrap the memory section.
    """
    text = _DETAILS_TAG.sub(f"<{_ZWSP}", text)
    text = _HTML_BLOCK_START.sub(rf"\1<{_ZWSP}", text)
    return break_markers(text)


def _split_fences(text: str) -> tuple[list[tuple[bool, str]], str | None]:
    """Split into (is_code, chunk) by fenced code blocks; also the closer of a fence left open."""
    chunks: list[tuple[bool, str]] = []
    current: list[str] = []
    closer: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.fullmatch(line.rstrip("\r\n"))
        if closer is None and match and _opens(match):
            chunks.append((False, "".join(current)))
            current = [line]
            closer = _closer_for(match)
        elif closer is not None and match and _closes(match, closer):
            chunks.append((True, "".join([*current, line])))
            current = []
            closer = None
        else:
            current.append(line)
    chunks.append((closer is not None, "".join(current)))
    return [c for c in chunks if c[1]], closer


def _opens(match: re.Match[str]) -> bool:
    _, run, info = match.groups()
    return not (run[0] == "`" and "`" in info)  # a backtick in the info string: a code span


def _closes(match: re.Match[str], closer: str) -> bool:
    _, run, info = match.groups()
    fence = closer.lstrip(" \t>")
    return run[0] == fence[0] and len(run) >= len(fence) and not info.strip()


def _closer_for(match: re.Match[str]) -> str:
    """The opener's container prefix (list markers as spaces) and fence: closes it in place."""
    prefix, run, _ = match.groups()
    return _LIST_MARKER.sub(lambda m: " " * len(m.group(0)), prefix) + run


def _close_fence(text: str) -> str:
    _, closer = _split_fences(text)
    return f"{text}\n{closer}" if closer else text


def _fenced(text: str, info: str) -> str:
    """A fenced block that no line of ``text`` can close: the fence outruns every backtick run."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _safe_line(text: str) -> str:
    return _safe_prose(_one_line(text)[:_NOTE_LIMIT])


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _code(text: str) -> str:
    """Inline code that holds any text (backticks included)."""
    text = _one_line(text)
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# --- size limits --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Budget:
    limit: int
    size: Callable[[str], int]  # additive over concatenation
    note: str


def _utf16_len(text: str) -> int:
    # At least the number of characters: within this, a body fits whichever way GitHub counts.
    return len(text.encode("utf-16-le")) // 2


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _fit(build: Callable[[str, str], str], review: str, diff: str, budget: _Budget) -> str:
    """``build(review, diff)`` within the limit: cut the diff first, then the review.

    Both are inserted verbatim, so everything else is a fixed overhead, and a cut that removes
    the excess makes the document fit (a shorter diff can only shorten its fence).
    """
    text = build(review, diff)
    excess = budget.size(text) - budget.limit
    if excess > 0 and diff:
        diff = _cut_diff(diff, budget.size(diff) - excess, budget)
        text = build(review, diff)
        excess = budget.size(text) - budget.limit
    if excess > 0:
        review = _cut_review(review, budget.size(review) - excess, budget)
        text = build(review, diff)
    return text


def _cut_diff(diff: str, room: int, budget: _Budget) -> str:
    head = _prefix_at_boundary(diff, room - budget.size(budget.note) - 1, budget.size)
    head = head.rstrip("\n")
    return f"{head}\n{budget.note}" if head.strip() else budget.note


def _cut_review(review: str, room: int, budget: _Budget) -> str:
    suffix = f"\n\n_{budget.note}_"
    room -= budget.size(suffix)
    head_room = room
    while head_room > 0:
        head = _close_fence(_prefix_at_boundary(review, head_room, budget.size).rstrip())
        overflow = budget.size(head) - room  # closing a fence the cut left open takes room
        if overflow <= 0:
            return f"{head}{suffix}" if head else suffix.strip()
        head_room -= overflow
    return suffix.strip()


def _prefix_at_boundary(text: str, room: int, size: Callable[[str], int]) -> str:
    """The longest prefix within ``room``, ending at a line break (else a space) when reasonable.

    Cutting at a boundary never splits a ``@mention`` we wrapped in backticks.
    """
    if room <= 0:
        return ""
    head = text[:room]
    while size(head) > room:  # each character counts at least 1, so this ends quickly
        head = head[: len(head) - (size(head) - room)]
    if len(head) == len(text):
        return head
    for boundary in ("\n", " "):
        cut = head.rfind(boundary)
        if cut > len(head) // 2:
            return head[:cut]
    return head


@cache
def _load_template(name: str) -> string.Template:
    return string.Template(resources.files("memory_action").joinpath("templates", name).read_text())


def _template(name: str, **fields: str) -> str:
    return _load_template(name).substitute(fields).rstrip("\n") + "\n"
