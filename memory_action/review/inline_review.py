"""A pull request run's review as inline comments, around the review engine.

Before the engine runs (``prepare``): the findings ledger comes from the pull request's overlay
entry (``memory.review_ledger``); people's feedback on the bot's comments updates it and may
propose memory lines (``review_feedback``); open findings whose code left the diff are outdated;
and on ``synchronize`` only the files changed since the last reviewed head are reviewed again
(GitHub's compare: ``ahead``), or everything after a force push or when that head is unknown.

After it (``publish``): the findings the ledger does not hold go out as ONE pull request review
(``GitHubClient.post_review``, event ``COMMENT``): those with an anchor GitHub accepts
(``review.anchors``) as inline comments, the others in the review's body. The sticky comment
keeps the summary and links the review. A token that may not post reviews (a fork's) leaves the
findings written out in the text the job summary shows, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from memory_action.errors import GitHubError
from memory_action.github.pull_request import (
    ChangedFile,
    CommentPermissionError,
    PullRequestInfo,
    PullRequestReader,
)
from memory_action.github.reviews import CommentFeedback, Comparison, InlineComment, PostedReview
from memory_action.lifecycle.layers import StartingMemory
from memory_action.memory.items import with_item
from memory_action.memory.review_ledger import LEDGER_STATES, ReviewLedger
from memory_action.memory.state import read_memory, write_memory
from memory_action.plan import Plan
from memory_action.review.anchors import anchor, comment_body
from memory_action.review.dismissals import HeldBack, hold_back
from memory_action.review.findings import Finding
from memory_action.review.findings_text import findings_markdown
from memory_action.review.ledger import (
    mark_outdated,
    open_findings_note,
    recorded,
    unposted,
    with_states,
)
from memory_action.review.review_feedback import read_feedback
from memory_action.safety.outgoing import SafeText, gate

if TYPE_CHECKING:  # LangChain loads only when an agent runs
    from memory_action.review.engine import ReviewResult

FULL = "Full review"  # the plain case, not worth a line of its own
COMPARE_MAX_FILES = 300  # GitHub lists at most this many files of a comparison


@runtime_checkable
class ReviewAccess(Protocol):
    """What an inline review needs from GitHub (``GitHubClient`` has it)."""

    @property
    def identity(self) -> str: ...

    def post_review(
        self, pr_number: int, commit_id: str, body: SafeText, comments: Sequence[InlineComment]
    ) -> PostedReview: ...

    def review_feedback(self, pr_number: int) -> list[CommentFeedback]: ...

    def compare(self, base: str, head: str) -> Comparison | None: ...

    def write_access(self, login: str) -> tuple[bool, str]: ...


@dataclass(kw_only=True)
class CachedReader:
    """The pull request read once: the engine, the anchors and the ledger see the same files."""

    reader: PullRequestReader
    _info: PullRequestInfo | None = None
    _files: list[ChangedFile] | None = None

    def info(self) -> PullRequestInfo:
        if self._info is None:
            self._info = self.reader.info()
        return self._info

    def changed_files(self) -> list[ChangedFile]:
        if self._files is None:
            self._files = self.reader.changed_files()
        return list(self._files)

    def file_content(self, path: str) -> str | None:
        return self.reader.file_content(path)

    def base_file_content(self, path: str) -> str | None:
        return self.reader.base_file_content(path)


@dataclass(frozen=True, kw_only=True)
class Prepared:
    ledger: ReviewLedger
    earlier: str  # the open findings, for the model
    unchanged: frozenset[str]  # files not reviewed again (an incremental review)
    scope_note: str  # what this run reviews, in one sentence
    lessons: tuple[str, ...] = ()  # memory lines proposed from people's feedback
    proposed: frozenset[str] = frozenset()  # ledger ids whose lesson is proposed
    posted_before: frozenset[tuple[str, str]] = frozenset()  # (path, first line) of ours
    notes: tuple[str, ...] = ()
    memory: str = ""  # the memory the run loaded: its dismissals hold findings back


@dataclass(frozen=True, kw_only=True)
class Published:
    markdown: str  # the review as the sticky comment and the job summary show it
    ledger: ReviewLedger | None  # None: nothing to save (no inline review this run)
    review_url: str = ""
    reviews: int = 0  # pull request reviews posted (one, or more for a very long one)
    notes: tuple[str, ...] = field(default_factory=tuple)
    held_back: tuple[HeldBack, ...] = ()  # new findings a dismissal in memory matched


def review_access(plan: Plan) -> ReviewAccess | None:
    github = plan.services.github
    if plan.context.pull_request is None or not plan.settings.post_comment:
        return None
    return github if isinstance(github, ReviewAccess) else None


def stored_ledger(start: StartingMemory) -> ReviewLedger:
    overlay = start.overlay
    state = overlay.state if overlay is not None else None
    return state.review if state is not None and state.review is not None else ReviewLedger()


def prepare(plan: Plan, start: StartingMemory, reader: CachedReader) -> Prepared:
    """The ledger after feedback and outdated code, what to review, what to tell the model."""
    pr = plan.context.pull_request
    github = review_access(plan)
    ledger = stored_ledger(start)
    files = reader.changed_files()
    # Committed memory with the pull request's overlay: a line people vetoed never reached it.
    memory = start.text if plan.settings.enable_memory else ""
    if pr is None or github is None:
        return Prepared(
            ledger=ledger,
            earlier=open_findings_note(ledger),
            unchanged=frozenset(),
            scope_note="",
            memory=memory,
        )
    comments = _feedback(plan, github, pr.number)
    feedback = read_feedback(
        ledger, comments, writer=lambda login: github.write_access(login)[0], bot=github.identity
    )
    ledger = mark_outdated(with_states(ledger, feedback.states), files)
    unchanged, scope_note = _scope(plan, github, ledger, reader)
    notes = (
        (f"{feedback.ignored} dismissals from people without write access were not taken",)
        if feedback.ignored
        else ()
    )
    return Prepared(
        ledger=ledger,
        earlier=open_findings_note(ledger),
        unchanged=unchanged,
        scope_note=scope_note,
        lessons=feedback.lessons,
        proposed=feedback.proposed,
        posted_before=frozenset((c.path, _first_line(c.body)) for c in comments),
        notes=notes,
        memory=memory,
    )


def _feedback(plan: Plan, github: ReviewAccess, number: int) -> list[CommentFeedback]:
    try:
        return github.review_feedback(number)
    except GitHubError as exc:  # feedback is a hint: without it the review goes on
        plan.log.warning(f"The feedback on earlier review comments was not read: {exc}")
        return []


def _scope(
    plan: Plan, github: ReviewAccess, ledger: ReviewLedger, reader: CachedReader
) -> tuple[frozenset[str], str]:
    """The files not to review again, and the sentence that says what this run reviews."""
    context = plan.context
    head = reader.info().head_sha
    last = ledger.head or context.before
    full = _full_review(context.action, last, head)
    comparison = None if full else _compare(plan, github, last, head)
    full = full or _not_incremental(comparison, last)
    if full or comparison is None:
        return frozenset(), full
    changed = {f.path for f in comparison.files}
    changed |= {f.previous_path for f in comparison.files if f.previous_path}
    unchanged = frozenset(f.path for f in reader.changed_files() if f.path not in changed)
    reviewed = len(reader.changed_files()) - len(unchanged)
    return unchanged, (
        f"Incremental review: {reviewed} files changed since {last[:7]} were reviewed; "
        f"{len(unchanged)} unchanged since then were not reviewed again"
    )


def _full_review(action: str, last: str, head: str) -> str:
    """Why this run reviews everything before asking GitHub anything ("": ask)."""
    if action != "synchronize":
        return FULL
    if not last:
        return "Full review: no earlier review of this pull request is known"
    if last == head:
        return f"Full review: {head[:7]} was reviewed before, reviewed again"
    return ""


def _compare(plan: Plan, github: ReviewAccess, last: str, head: str) -> Comparison | None:
    try:
        return github.compare(last, head)
    except GitHubError as exc:
        plan.log.warning(f"Comparing with the last reviewed commit failed: {exc}")
        return None


def _not_incremental(comparison: Comparison | None, last: str) -> str:
    """Why the comparison with the last reviewed head does not allow an incremental review."""
    if comparison is None:
        return f"Full review: GitHub does not know {last[:7]}, reviewed last"
    if comparison.status != "ahead":
        return f"Full review: the branch was rewritten since {last[:7]} (a force push)"
    if len(comparison.files) >= COMPARE_MAX_FILES:
        return f"Full review: too many files changed since {last[:7]}"
    return ""


def publish(
    plan: Plan, prepared: Prepared, result: ReviewResult, reader: CachedReader
) -> Published:
    """Post this run's new findings as one review; the Markdown the comment and summary show.

    Only findings on files the model was shown count: one on a file the review skipped (lock,
    vendored, generated, excluded, unchanged since the last review) or that is not in the diff
    at all is never posted, whatever the model says."""
    shown = [f for f in result.findings if f.path in result.reviewed]
    unshown = len(result.findings) - len(shown)
    published = _publish(plan, prepared, replace(result, findings=tuple(shown)), reader)
    note = (
        f"{unshown} findings on files the model was not shown were not posted"
        if unshown > 1
        else "1 finding on a file the model was not shown was not posted"
        if unshown
        else ""
    )
    return replace(published, notes=(*prepared.notes, *published.notes, *filter(None, [note])))


def _publish(
    plan: Plan, prepared: Prepared, result: ReviewResult, reader: CachedReader
) -> Published:
    files = reader.changed_files()
    ledger = with_states(prepared.ledger, dict.fromkeys(result.fixed, "fixed"))
    ledger = ledger.model_copy(
        update={
            "entries": tuple(
                e.model_copy(update={"proposed": True}) if e.id in prepared.proposed else e
                for e in ledger.entries
            )
        }
    )
    fresh = [
        f
        for f in unposted(ledger, result.findings, files)
        if (f.path, _first_line(comment_body(f))) not in prepared.posted_before
    ]
    filtered = hold_back(fresh, files, prepared.memory)
    new, held = list(filtered.kept), filtered.held
    result = replace(result, held_back=held)
    github = review_access(plan)
    pr = plan.context.pull_request
    if github is None or pr is None:
        written = _written_out(result, prepared, new, "", files)
        return Published(markdown=written, ledger=None, held_back=held)
    placed = [(f, anchor(f, files, masked=plan.masked)) for f in new]
    inline = [(f, c) for f, c in placed if c is not None]
    loose = [f for f, c in placed if c is None]
    head = reader.info().head_sha
    if not new:
        ledger = recorded(ledger, [], files, head)
        markdown = _summary_markdown(result, prepared, ledger, None)
        return Published(markdown=markdown, ledger=ledger, held_back=held)
    try:
        body = gate(_review_body(prepared, loose), plan.masked)
        posted = github.post_review(pr.number, head, body, [c for _, c in inline])
    except CommentPermissionError:
        plan.log.notice(
            "This run's token may not post a pull request review (fork pull requests get a "
            "read-only token); the findings are in the job summary."
        )
        written = _written_out(result, prepared, new, "the token may not post", files)
        return Published(markdown=written, ledger=None, held_back=held)
    except GitHubError as exc:
        plan.log.warning(f"The review with inline comments was not posted: {exc}")
        return Published(
            markdown=_written_out(result, prepared, new, "posting it failed", files),
            ledger=None,
            held_back=held,
        )
    ids = list(posted.comment_ids) + [None] * (len(inline) - len(posted.comment_ids))
    done = [(f, i) for (f, _), i in zip(inline, ids, strict=True)] + [(f, None) for f in loose]
    ledger = recorded(ledger, done, files, head)
    url = posted.urls[0] if posted.urls else ""
    markdown = _summary_markdown(
        result, prepared, ledger, url, inline=len(inline), loose=len(loose)
    )
    plan.log.info(f"Posted the review with {len(inline)} inline comments: {url}")
    return Published(
        markdown=markdown,
        ledger=ledger,
        review_url=url,
        reviews=len(posted.urls),
        held_back=held,
    )


def add_lessons(plan: Plan, lessons: Sequence[str]) -> int:
    """Append the lessons people's feedback taught to the memory file; how many were new."""
    if not lessons or not plan.settings.enable_memory:
        return 0
    text = read_memory(plan.folder, "this run's memory folder")
    new = [line for line in lessons if line not in text.splitlines()]
    if new:
        write_memory(plan.folder, with_item(text, "\n".join(new)))
    return len(new)


def _review_body(prepared: Prepared, loose: Sequence[Finding]) -> str:
    parts = _scope_sentence(prepared)
    if loose:
        parts += [
            "Findings on lines a review comment cannot point at:",
            findings_markdown(loose),
        ]
    return "\n\n".join(p for p in parts if p)


def _summary_markdown(
    result: ReviewResult,
    prepared: Prepared,
    ledger: ReviewLedger,
    url: str | None,
    *,
    inline: int = 0,
    loose: int = 0,
) -> str:
    lines = []
    if url:
        lines.append(
            f"**Inline review:** [{inline} new comments on the changed lines]({url})"
            + (f" and {loose} findings in its body" if loose else "")
            + "."
        )
    lines += _scope_sentence(prepared)
    counts = {s: sum(e.state == s for e in ledger.entries) for s in LEDGER_STATES}
    if any(counts.values()):
        lines.append(
            "Findings of this pull request so far: "
            + ", ".join(f"{n} {state}" for state, n in counts.items())
            + "."
        )
    lines += _dropped(result) + _held_back(result)
    return _joined(result.answer, "\n\n".join(lines))


def _written_out(
    result: ReviewResult,
    prepared: Prepared,
    new: Sequence[Finding],
    why: str,
    files: Sequence[ChangedFile],
) -> str:
    """The review with its findings written out (no review was posted), each off the changed
    lines saying so (``publish`` already held back findings on files the model was not shown)."""
    head = f"**Findings** (not posted as a review: {why}):" if why else "**Findings:**"
    lines = _scope_sentence(prepared)
    if new:
        lines += [head, findings_markdown(new, files)]
    lines += _dropped(result) + _held_back(result)
    return _joined(result.answer, "\n\n".join(lines))


def _scope_sentence(prepared: Prepared) -> list[str]:
    """What this run reviewed, as a sentence; none for a plain full review."""
    return [f"{prepared.scope_note}."] if prepared.scope_note not in ("", FULL) else []


def _dropped(result: ReviewResult) -> list[str]:
    if not result.dropped:
        return []
    return [
        f"{len(result.dropped)} findings the model gave were dropped as not valid "
        f"(first: {result.dropped[0]})."
    ]


def _held_back(result: ReviewResult) -> list[str]:
    """How many findings memory held back, and why (the list is in "Held back by memory")."""
    count = len(result.held_back)
    if not count:
        return []
    what = "1 finding was" if count == 1 else f"{count} findings were"
    return [
        f"**Held back:** {what} not posted: a person with write access dismissed the same "
        "finding on the same code before, and memory keeps that dismissal (listed under "
        '"Held back by memory"; forget the memory line to see such findings again).'
    ]


def _joined(summary: str, tail: str) -> str:
    return "\n\n---\n\n".join(p for p in (summary.strip(), tail) if p)


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]
