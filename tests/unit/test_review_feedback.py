"""Feedback on the bot's inline comments: by write access only, with the reason people gave."""

from __future__ import annotations

import pytest

from memory_action.github.reviews import CommentFeedback, Reaction, Reply
from memory_action.memory.review_ledger import LedgerEntry, ReviewLedger
from memory_action.review.review_feedback import Feedback, read_feedback

BOT = "github-actions[bot]"
ENTRY = LedgerEntry(
    fingerprint="ab" * 16, path="src/a.py", title="Unchecked `None`", line=3, comment_id=5
)


def _comment(
    *, replies: tuple[Reply, ...] = (), reactions: tuple[Reaction, ...] = (), resolved: bool = False
) -> CommentFeedback:
    return CommentFeedback(
        id=5,
        path="src/a.py",
        line=3,
        side="RIGHT",
        body="**Unchecked None**",
        url="u",
        thumbs_up=0,
        thumbs_down=len(reactions),
        reactions=reactions,
        replies=replies,
        resolved=resolved,
        outdated=False,
    )


def _read(comment: CommentFeedback, writers: set[str]) -> Feedback:
    return read_feedback(
        ReviewLedger(entries=(ENTRY,)), [comment], writer=writers.__contains__, bot=BOT
    )


def test_an_intended_reply_from_a_writer_is_a_lesson_with_its_reason() -> None:
    reply = Reply(
        id=9,
        login="mona",
        author_association="MEMBER",
        body="Intended, because callers check it.\nThanks",
    )
    found = _read(_comment(replies=(reply,)), {"mona"})
    assert found.states == {ENTRY.id: "dismissed"}
    reason = "because callers check it. Thanks. (@mona)"
    assert found.lessons == (f'- Review: do not flag "Unchecked None" in src/a.py, {reason}',)


def test_the_same_from_someone_without_write_access_is_only_counted() -> None:
    reply = Reply(
        id=9, login="eve", author_association="NONE", body="This is intended, because reasons"
    )
    found = _read(
        _comment(replies=(reply,), reactions=(Reaction(content="-1", login="eve"),)), {"mona"}
    )
    assert (found.states, found.lessons, found.ignored) == ({}, (), 2)


def test_a_thumbs_down_from_a_writer_dismisses_and_a_resolved_thread_closes() -> None:
    found = _read(_comment(reactions=(Reaction(content="-1", login="mona"),)), {"mona"})
    assert found.states == {ENTRY.id: "dismissed"} and "thumbs-down" in found.lessons[0]
    found = _read(_comment(resolved=True), set())
    assert (found.states, found.lessons) == ({ENTRY.id: "dismissed"}, ())


@pytest.mark.parametrize(
    "body",
    [
        "Good catch, that was not intended. Will fix.",
        "Oops, not intentional. Fixing it now.",
        "Not on purpose, thanks for spotting it.",
        "Yes, a real bug, not expected behaviour.",
        "It wasn't really deliberate, changing it.",
    ],
)
def test_a_writer_agreeing_it_is_not_intended_dismisses_nothing(body: str) -> None:
    reply = Reply(id=9, login="mona", author_association="MEMBER", body=body)
    found = _read(_comment(replies=(reply,)), {"mona"})
    assert (found.states, found.lessons) == ({}, ())


@pytest.mark.parametrize(
    "body",
    ["Not a bug, because callers treat None as no data.", "Is it a mistake? No, it is intended."],
)
def test_a_dismissal_next_to_a_negation_still_dismisses(body: str) -> None:
    reply = Reply(id=9, login="mona", author_association="MEMBER", body=body)
    assert _read(_comment(replies=(reply,)), {"mona"}).states == {ENTRY.id: "dismissed"}
