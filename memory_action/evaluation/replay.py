"""``memory-agent eval replay EVENTS.jsonl``: whether the action would have posted each finding of
a review history, by the product's own rules, and the totals.

Events are read in order; each repository is replayed on its own:

- a finding the pull request's ledger already holds (same path, title and code) is not posted
  again (``review.ledger.unposted``);
- else it is held back when a dismissal in the repository's memory matches it
  (``review.dismissals.hold_back``, the filter every review runs), else it is posted;
- what people did on a posted finding is read as a run reads it
  (``review.review_feedback.read_feedback``): a 👎 or an "intended, because …" reply from
  someone who could write becomes the dismissal lesson, with the finding's signature, and is in
  memory for every later event of another pull request of the repository (as once its pull
  request is merged with the item ticked). Other people's dismissals are counted, not learned.

"Raised again after a dismissal": a posted finding that matches (same signature) one people
dismissed earlier in the repository: a 👎 or an "intended" reply from anyone, or a thread
resolved with the code unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from memory_action.evaluation.replay_events import (
    BadEventsError,
    ReviewEvent,
    lines_of,
    read_events,
)
from memory_action.github.pull_request import ChangedFile
from memory_action.github.reviews import CommentFeedback
from memory_action.github.reviews import Reaction as GitHubReaction
from memory_action.github.reviews import Reply as GitHubReply
from memory_action.memory.review_ledger import ReviewLedger
from memory_action.review import dismissals
from memory_action.review.findings import Finding
from memory_action.review.ledger import recorded, unposted, with_states
from memory_action.review.review_feedback import read_feedback

EXIT_DONE, EXIT_BAD_INPUT = 0, 2
_NO_BOT = ""  # every reply in the file is a person's
Status = Literal["posted", "held back", "already posted"]


@dataclass(frozen=True, kw_only=True)
class Source:
    """Where a dismissal came from: the event's line and pull request, and who made it."""

    line: int
    pull_request: int
    how: str  # "by a writer", "by someone who cannot write", "resolved with no change"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    line: int  # of the events file
    event: ReviewEvent
    status: Status
    held_by: Source | None = None  # the dismissal that held it back
    raised_again: Source | None = None  # posted though people dismissed the same finding there
    learned: bool = False  # a writer's dismissal of it became memory
    dismissed_by_others: bool = False  # dismissed by people who could not write: not learned


@dataclass
class _Repository:
    """What one repository's replay has learned so far."""

    memory: list[tuple[int, str]] = field(default_factory=list)  # (pull request, memory line)
    sources: dict[str, Source] = field(default_factory=dict)  # memory line → where it came from
    dismissed: list[tuple[dismissals.Dismissal, Source]] = field(default_factory=list)  # by people
    ledgers: dict[int, ReviewLedger] = field(default_factory=dict)  # pull request → its ledger

    def memory_for(self, pull_request: int) -> str:
        """Memory as a review of ``pull_request`` reads it: what other pull requests taught."""
        return "\n".join(line for number, line in self.memory if number != pull_request)


def replay(events: Iterable[tuple[int, ReviewEvent]]) -> list[Verdict]:
    repositories: dict[str, _Repository] = {}
    return [
        _verdict(number, event, repositories.setdefault(event.repository, _Repository()))
        for number, event in events
    ]


def _verdict(number: int, event: ReviewEvent, repo: _Repository) -> Verdict:
    finding = Finding(
        path=event.path,
        line=event.line,
        start_line=event.start_line if event.start_line < event.line else None,
        title=event.title,
        body=event.body,
    )
    files = [_changed_file(event)]
    ledger = repo.ledgers.get(event.pull_request, ReviewLedger())
    if not unposted(ledger, [finding], files):
        return Verdict(line=number, event=event, status="already posted")
    filtered = dismissals.hold_back([finding], files, repo.memory_for(event.pull_request))
    if filtered.held:
        source = repo.sources.get(filtered.held[0].line.strip())
        return Verdict(line=number, event=event, status="held back", held_by=source)
    signature = dismissals.signature_of(finding, files)
    earlier = dismissals.held_by(signature, [d for d, _ in repo.dismissed])
    raised_again = next((s for d, s in repo.dismissed if d is earlier), None)
    ledger = recorded(ledger, [(finding, number)], files, ledger.head)
    comment = _feedback(number, event)
    writers = {r.login for r in event.reactions if r.writer}
    writers |= {r.login for r in event.replies if r.writer}
    read = read_feedback(ledger, [comment], writer=writers.__contains__, bot=_NO_BOT)
    repo.ledgers[event.pull_request] = with_states(ledger, read.states)
    # What anyone dismissed, read as if everyone could write: the product's own reading.
    by_anyone = read_feedback(ledger, [comment], writer=lambda _login: True, bot=_NO_BOT)
    how = (
        "by a writer"
        if read.lessons
        else "by someone who cannot write"
        if by_anyone.lessons
        else "resolved with no change"
    )
    source = Source(line=number, pull_request=event.pull_request, how=how)
    for lesson in read.lessons:
        repo.memory.append((event.pull_request, lesson))
        repo.sources[lesson.strip()] = source
    if by_anyone.lessons or (event.resolved and not event.changed_after):
        repo.dismissed.append((dismissals.Dismissal(line="", signature=signature), source))
    return Verdict(
        line=number,
        event=event,
        status="posted",
        raised_again=raised_again,
        learned=bool(read.lessons),
        dismissed_by_others=bool(by_anyone.lessons) and not read.lessons,
    )


def _changed_file(event: ReviewEvent) -> ChangedFile:
    """The pull request's diff as far as the event shows it: its context and code, added."""
    shown = [*lines_of(event.context), *lines_of(event.code)]
    first = event.start_line - len(lines_of(event.context))
    patch = f"@@ -0,0 +{first},{len(shown)} @@\n" + "".join(f"+{line}\n" for line in shown)
    return ChangedFile(
        path=event.path, status="modified", additions=len(shown), deletions=0, patch=patch
    )


def _feedback(comment_id: int, event: ReviewEvent) -> CommentFeedback:
    reactions = tuple(
        GitHubReaction(content=r.content, login=r.login)
        for r in event.reactions
        if r.content in ("+1", "-1")
    )
    replies = tuple(
        GitHubReply(
            id=comment_id * 1_000 + n,
            login=r.login,
            author_association="MEMBER" if r.writer else "NONE",
            body=r.body,
        )
        for n, r in enumerate(event.replies, start=1)
    )
    return CommentFeedback(
        id=comment_id,
        path=event.path,
        line=event.line,
        side="RIGHT",
        body=event.body,
        url="",
        thumbs_up=sum(r.content == "+1" for r in reactions),
        thumbs_down=sum(r.content == "-1" for r in reactions),
        reactions=reactions,
        replies=replies,
        resolved=event.resolved,
        outdated=event.changed_after,
    )


# -- printing ------------------------------------------------------------------------------------


def describe(verdict: Verdict) -> str:
    event = verdict.event
    where = f"{event.repository}#{event.pull_request} {event.path}:{event.line}"
    head = f"line {verdict.line}: {where} {event.title!r}: {verdict.status}"
    if verdict.status == "held back":
        return head + (f" ({_from(verdict.held_by)})" if verdict.held_by else "")
    if verdict.status == "already posted":
        return head + " on this pull request (the ledger)"
    notes: list[str] = []
    if verdict.raised_again is not None:
        notes.append(f"RAISED AGAIN after a dismissal ({_from(verdict.raised_again)})")
    if verdict.learned:
        notes.append("a writer dismissed it: learned")
    elif verdict.dismissed_by_others:
        notes.append("dismissed by people who cannot write: not learned")
    elif verdict.event.resolved and not verdict.event.changed_after:
        notes.append("resolved with no change: not learned")
    return head + (f"; {'; '.join(notes)}" if notes else "")


def _from(source: Source) -> str:
    return f"dismissed on #{source.pull_request}, line {source.line}, {source.how}"


def totals(verdicts: Sequence[Verdict]) -> str:
    def count(status: Status) -> int:
        return sum(v.status == status for v in verdicts)

    again = sum(v.raised_again is not None for v in verdicts)
    return (
        f"{len(verdicts)} events: {count('posted')} posted, {count('held back')} held back, "
        f"{count('already posted')} already posted on their pull request; "
        f"raised again after a dismissal: {again}"
    )


def replay_command(path: Path, *, out: TextIO, err: TextIO) -> int:
    """Print a verdict a line, then the totals; exit 2 with one line for a bad file."""
    try:
        events = list(read_events(path))  # every line checked before anything is printed
    except BadEventsError as exc:
        print(f"memory-agent eval replay: {exc}", file=err)
        return EXIT_BAD_INPUT
    verdicts = replay(events)
    for verdict in verdicts:
        print(describe(verdict), file=out)
    print(totals(verdicts), file=out)
    return EXIT_DONE
