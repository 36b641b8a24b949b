"""What people made of the bot's inline comments, as ledger states and memory proposals.

Read at the start of a pull request's run (``GitHubClient.review_feedback``): a thread people
resolved, or one GitHub marks outdated, is no longer open. A 👎 or a reply saying the code is
"intended, because …" from someone with write access dismisses the finding and becomes a
proposed memory line ("do not flag X in Y, because …", with the finding's signature:
``review.dismissals``, which holds back the same finding on later pull requests): it joins the
sticky comment's checklist like any memory change of the run, ticked by the run's trust as
every item is, and once the pull request is merged the next reviews read it. Feedback from
people without write access is only counted: anyone may react, and memory is the repository's
standing instructions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_action.github.reviews import CommentFeedback
from memory_action.memory.review_ledger import LedgerState, ReviewLedger
from memory_action.review.dismissals import lesson, plain

MAX_REASON = 200  # characters of a reply kept as the reason
_INTENDED = re.compile(
    r"\b(intended|intentional(ly)?|on purpose|by design|deliberate(ly)?|not a bug|"
    r"false positive|won'?t fix|expected behaviou?r)\b",
    re.IGNORECASE,
)
# "not intended", "wasn't really on purpose": a reply that agrees the finding is a mistake.
_NEGATED = re.compile(
    r"\b(?:not|never|no|isn'?t|wasn'?t|aren'?t|weren'?t|hardly)\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_BECAUSE = re.compile(r"\bbecause\b[\s,:]*(.*)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Feedback:
    states: dict[str, LedgerState]  # ledger entry id → its new state
    lessons: tuple[str, ...]  # memory lines to propose, one per dismissed finding
    proposed: frozenset[str]  # ledger entry ids whose lesson is proposed now
    ignored: int = 0  # 👎 and replies from people without write access


def read_feedback(
    ledger: ReviewLedger,
    comments: Sequence[CommentFeedback],
    *,
    writer: Callable[[str], bool],
    bot: str,
) -> Feedback:
    """``writer(login)``: whether the person may write to the repository (asked only for people
    who gave a 👎 or replied)."""
    by_comment = {e.comment_id: e for e in ledger.entries if e.comment_id is not None}
    states: dict[str, LedgerState] = {}
    lessons: list[str] = []
    proposed: set[str] = set()
    ignored = 0
    for comment in comments:
        entry = by_comment.get(comment.id)
        if entry is None or (entry.state != "open" and entry.proposed):
            continue
        reason, others = _dismissal(comment, writer=writer, bot=bot)
        ignored += others
        if reason is not None:
            states[entry.id] = "dismissed"
            if not entry.proposed:
                lessons.append(lesson(entry, reason))
                proposed.add(entry.id)
        elif comment.resolved:
            states[entry.id] = "dismissed"
        elif comment.outdated:
            states[entry.id] = "outdated"
    return Feedback(
        states=states, lessons=tuple(lessons), proposed=frozenset(proposed), ignored=ignored
    )


def _dismissal(
    comment: CommentFeedback, *, writer: Callable[[str], bool], bot: str
) -> tuple[str | None, int]:
    """Why a person with write access dismissed the comment (None: nobody did), and how many
    dismissals came from people without it."""
    others = 0
    for reply in comment.replies:
        if reply.login == bot or not dismisses(reply.body):
            continue
        if writer(reply.login):
            return _reason(reply.body, reply.login), others
        others += 1
    for reaction in comment.reactions:
        if reaction.content != "-1" or reaction.login == bot:
            continue
        if writer(reaction.login):
            return f"@{plain(reaction.login)} marked it as not useful (a thumbs-down).", others
        others += 1
    return None, others


def dismisses(body: str) -> bool:
    """Whether a reply says the code is meant to be so: a dismissal word not negated ("that was
    not intended, will fix" agrees with the finding)."""
    return any(_NEGATED.search(body[: found.start()]) is None for found in _INTENDED.finditer(body))


def _reason(body: str, login: str) -> str:
    found = _BECAUSE.search(body)
    text = plain(found.group(1) if found and found.group(1).strip() else body)
    if len(text) > MAX_REASON:
        text = text[: MAX_REASON - 1].rstrip() + "…"
    text = text.rstrip(".") + "."
    return f"{text} (@{plain(login)})"
