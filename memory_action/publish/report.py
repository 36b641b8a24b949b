"""The sticky pull request comment and the job summary, rendered from plain data (no I/O).

What the model wrote is untrusted Markdown: ``untrusted_markdown.safe_markdown`` makes it harmless
to post (mentions, raw HTML, fences left open, our markers), reading it with a CommonMark parser.
The memory diff is posted in a fence no line of it can close, with its markers broken: the sticky
comment of one agent cannot be spoofed by another's text.

The comment may carry the proposal of ``memory.proposals`` (a checklist people can veto and a
machine-readable block). It is ours, not the model's, and is inserted verbatim and never cut; it
must stay within ``PROPOSAL_LIMIT`` characters, which leaves the rest of the comment room enough.

Both documents have a size limit; when over it, the memory diff is cut first, then the review,
each with a visible note. The marker, header, proposal and footer are never cut.

``safe_comment`` and ``safe_summary`` are what is posted and written: the rendered document
through the outgoing gate (``outgoing.gate``), which keeps only our own HTML (``our_html``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from memory_action.memory.markers import comment_marker
from memory_action.memory.proposals import PROPOSAL_LIMIT
from memory_action.safety.outgoing import SafeText, gate
from memory_action.safety.untrusted_markdown import (
    break_markers,
    code_span,
    fence,
    raw_html,
    safe_markdown,
    safe_prose,
)

__all__ = ["break_markers", "safe_markdown"]  # also used from here (tests)

COMMENT_LIMIT = 65_536  # GitHub refuses a longer comment body
# GitHub refuses a step summary over 1 MiB; leave room for the error lines main() may append.
SUMMARY_LIMIT = 1_000_000
COMMENT_TRUNCATED = "… truncated (see the job summary)"
SUMMARY_TRUNCATED = "… truncated (the job summary has a size limit)"
_NOTE_LIMIT = 1_000  # our own notes are one line; an error message pasted in must not crowd out


@dataclass(frozen=True, kw_only=True)
class LoadedSource:
    """One memory source that was injected into the prompt."""

    path: str
    size_bytes: int
    writable: bool


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class ReviewFigures:
    """What a review covered and cost, for the comment's footer and the job summary."""

    outcome: str  # reviewed | partial | quota | skipped
    model_calls: int
    tokens_in: int
    tokens_out: int
    files_reviewed: int
    files_skipped: int
    not_reviewed: Sequence[tuple[str, str]] = ()  # (path, why), also files reviewed in part
    # Findings a dismissal in memory held back: (title, path:line, the memory line)
    held_back: Sequence[tuple[str, str, str]] = ()

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
    rows = [f"- {_code(path)}: {_safe_line(why)}" for path, why in figures.not_reviewed]
    count = len(rows)
    return _collapsed(f"Not reviewed ({count} file{'s' if count != 1 else ''})", rows)


def held_back_markdown(figures: ReviewFigures | None) -> str:
    """A collapsed list of the findings a dismissal in memory held back, each with its line."""
    if figures is None or not figures.held_back:
        return ""
    rows = [
        f"- **{_safe_line(title)}** at {_code(place)}, held back by {_code(line)}"
        for title, place, line in figures.held_back
    ]
    count = len(rows)
    return _collapsed(f"Held back by memory ({count} finding{'s' if count != 1 else ''})", rows)


def _collapsed(summary: str, rows: list[str]) -> str:
    """``rows`` in a collapsed block, the first ``NOT_REVIEWED_LISTED`` of them and a count."""
    shown = rows[:NOT_REVIEWED_LISTED]
    if len(rows) > NOT_REVIEWED_LISTED:
        shown.append(f"- and {len(rows) - NOT_REVIEWED_LISTED} more")
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(shown) + "\n\n</details>"


# The HTML our templates write around the memory changes and the footer.
MEMORY_DETAILS = "<details><summary>Memory changes in this run</summary>"
FIXED_HTML = (MEMORY_DETAILS, "</details>", "<sub>", "</sub>")
_NOT_REVIEWED_DETAILS = re.compile(
    r"<details><summary>(?:Not reviewed \(\d+ files?\)|Held back by memory \(\d+ findings?\))"
    r"</summary>"
)


def our_html(agent_name: str, *ours: str) -> tuple[str, ...]:
    """The raw HTML the gate keeps in a comment of ``agent_name``: its marker, our fixed
    ``<details>`` and ``<sub>``, and the HTML of ``ours`` (Markdown we wrote: a proposal)."""
    found = (snippet for markdown in ours for snippet in raw_html(markdown))
    return (comment_marker(agent_name), *FIXED_HTML, *found)


def kept_html(body: str) -> tuple[str, ...]:
    """Our fixed HTML in a comment we posted before (the "Not reviewed" and "Held back by
    memory" headers with their counts)."""
    return tuple(dict.fromkeys(_NOT_REVIEWED_DETAILS.findall(body)))


def safe_comment(
    masked: Iterable[str],
    *,
    agent_name: str,
    review_markdown: str,
    memory_diff: str,
    memory_note: str,
    run_url: str | None,
    proposal_markdown: str = "",
    figures: ReviewFigures | None = None,
) -> SafeText:
    """``render_comment`` through the outgoing gate: what is posted."""
    body = render_comment(
        agent_name=agent_name,
        review_markdown=review_markdown,
        memory_diff=memory_diff,
        memory_note=memory_note,
        run_url=run_url,
        proposal_markdown=proposal_markdown,
        figures=figures,
    )
    ours = our_html(
        agent_name, proposal_markdown, not_reviewed_markdown(figures), held_back_markdown(figures)
    )
    return gate(body, masked, ours=ours)


def safe_summary(summary: SummaryInput, masked: Iterable[str]) -> SafeText:
    """``render_summary(summary)`` through the outgoing gate: what the job summary gets."""
    ours = (*FIXED_HTML, *raw_html(summary.proposal_markdown))
    reviewed = not_reviewed_markdown(summary.figures), held_back_markdown(summary.figures)
    found = (snippet for markdown in reviewed for snippet in raw_html(markdown))
    return gate(render_summary(summary), masked, ours=(*ours, *found))


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
    proposal = _blocks(not_reviewed_markdown(figures), held_back_markdown(figures), proposal)

    def build(review: str, diff: str) -> str:
        memory = _memory_section(note, diff)
        return _template("comment.md", **fields, review=_join(review, proposal), memory=memory)

    review = safe_markdown(review_markdown) or "_The agent wrote no review._"
    diff = break_markers(memory_diff.strip("\n"))
    return _fit(
        build, review, diff, _Budget(limit=COMMENT_LIMIT, size=_utf16_len, note=COMMENT_TRUNCATED)
    )


def _blocks(*blocks: str) -> str:
    """Markdown blocks, each on its own (a blank line between), empty ones left out."""
    return "\n\n".join(block for block in blocks if block)


def _join(review: str, proposal: str) -> str:
    """The review, then the proposal as blocks of their own (a blank line between)."""
    return f"{review}\n\n{proposal}" if proposal else review


def _memory_section(note: str, diff: str) -> str:
    if not diff:
        return f"**Memory:** {note or 'No memory changes.'}"
    details = f"{MEMORY_DETAILS}\n\n{fence(diff, 'diff')}\n\n</details>"
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
        diff_text = fence(diff, "diff") if diff else "No memory changes."
        return _template("summary.md", **fields, review=_join(review, proposal), diff=diff_text)

    review = safe_markdown(summary.review_markdown) or "_The agent wrote no review._"
    diff = summary.memory_diff.strip("\n")
    proposal = _blocks(
        not_reviewed_markdown(summary.figures),
        held_back_markdown(summary.figures),
        summary.proposal_markdown.strip("\n"),
    )
    return _fit(
        build, review, diff, _Budget(limit=SUMMARY_LIMIT, size=_utf8_len, note=SUMMARY_TRUNCATED)
    )


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


def _safe_line(text: str) -> str:
    return safe_prose(_one_line(text)[:_NOTE_LIMIT])


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _code(text: str) -> str:
    """Inline code that holds any text (backticks included)."""
    return code_span(_one_line(text))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# --- size limits --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
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
        head = safe_markdown(_prefix_at_boundary(review, head_room, budget.size))
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
