"""The findings ledger, pure: never a finding twice, outdated when its code left the diff, state
changes only for open findings, the stored shape validated."""

from __future__ import annotations

from pathlib import Path

from memory_action.github.pull_request import ChangedFile
from memory_action.memory.review_ledger import MAX_TITLE, ReviewLedger, parse_ledger
from memory_action.memory.state import EntryState, load_state
from memory_action.review.findings import Finding
from memory_action.review.ledger import (
    mark_outdated,
    open_findings_note,
    recorded,
    unposted,
    with_states,
)
from memory_action.safety.outgoing import Form, gate
from tests.fakes.rendered_forms import rendered_forms
from tests.fakes.secrets_corpus import PLANTED

PATCH = "@@ -1,2 +1,4 @@\n a\n+b = None\n+c\n d\n"
FILES = [ChangedFile(path="x.py", status="modified", additions=2, deletions=0, patch=PATCH)]
B = Finding(path="x.py", line=2, title="b is None", body="")
C = Finding(path="x.py", line=3, title="c is unused", body="")


def _ledger() -> ReviewLedger:
    return recorded(ReviewLedger(), [(B, 11), (C, 12)], FILES, "a" * 40)


def test_what_the_ledger_holds_is_never_posted_again() -> None:
    ledger = _ledger()
    moved = [
        ChangedFile(
            path="x.py",
            status="modified",
            additions=3,
            deletions=0,
            patch="@@ -1,2 +1,5 @@\n a\n+new\n+b = None\n+c\n d\n",
        )
    ]
    again = Finding(path="x.py", line=3, title="B is none!", body="other words")
    assert unposted(ledger, [again], moved) == []  # moved a line down, same concern and code
    other = Finding(path="x.py", line=3, title="something else", body="")
    assert unposted(ledger, [other], moved) == [other]


def test_a_finding_whose_code_changed_is_outdated_the_rest_stay_open() -> None:
    changed = [
        ChangedFile(
            path="x.py",
            status="modified",
            additions=2,
            deletions=0,
            patch=PATCH.replace("+c\n", "+c = 1\n"),
        )
    ]
    states = {e.title: e.state for e in mark_outdated(_ledger(), changed).entries}
    assert states == {"b is None": "open", "c is unused": "outdated"}
    states = {e.title: e.state for e in mark_outdated(_ledger(), []).entries}
    assert states == {"b is None": "outdated", "c is unused": "outdated"}  # file left the diff


def test_only_open_findings_change_state_and_the_model_sees_the_open_ones() -> None:
    ledger = _ledger()
    b, c = ledger.entries
    fixed = with_states(ledger, {b.id: "fixed"})
    assert with_states(fixed, {b.id: "dismissed"}).entries[0].state == "fixed"
    note = open_findings_note(fixed)
    assert f"{c.id}: x.py:3: c is unused" in note and b.id not in note
    assert open_findings_note(ReviewLedger()) == ""


def test_the_stored_ledger_round_trips_and_a_bad_one_is_dropped_alone(tmp_path: Path) -> None:
    EntryState(layer="overlay", base="x", review=_ledger()).dump(tmp_path)
    state = load_state(tmp_path)
    assert state is not None and state.review == _ledger()
    assert parse_ledger({"entries": [{"fingerprint": "zz"}]}) is None
    assert parse_ledger({"head": "not a sha"}) is None


def test_a_long_title_is_cut_between_words_so_a_secret_in_it_is_never_cut_in_half() -> None:
    # A token split by emphasis that a cut at MAX_TITLE would leave as a token's first 33
    # characters: a piece the gate cannot know, most of the secret to a reader.
    token = next(p for p in PLANTED if p.family == "GitHub classic PAT").secrets[0]
    hidden = rendered_forms(token)["** emphasis"]
    title = "x" * (MAX_TITLE - len(hidden) + 10) + " " + hidden + " tail"
    [entry] = recorded(
        ReviewLedger(), [(Finding(path="x.py", line=2, title=title, body=""), 1)], FILES, "a" * 40
    ).entries
    assert len(entry.title) <= MAX_TITLE
    saved = gate(entry.title, form=Form.TEXT).text
    assert token[4:12] not in saved.replace("*", "")
    assert entry.title == "x" * (MAX_TITLE - len(hidden) + 10)


def test_a_title_of_one_long_word_is_cut_at_the_limit() -> None:
    long = Finding(path="x.py", line=2, title="y" * (MAX_TITLE + 50), body="")
    [entry] = recorded(ReviewLedger(), [(long, 1)], FILES, "a" * 40).entries
    assert entry.title == "y" * MAX_TITLE
