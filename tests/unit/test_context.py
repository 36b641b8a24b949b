"""``read_event`` and ``load_context``: real (trimmed) payloads and runner environments in, a typed
``RunContext`` with the design's trust decision out.

Payloads live in ``tests/fixtures/events/``; each test that needs a variant copies one and edits
the copy, so the fixtures stay what GitHub sends.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from memory_action.errors import EventError, UnsupportedEvent
from memory_action.memory.trust import Trust
from memory_action.run.context import (
    RunContext,
    decide_trust,
    load_context,
    read_event,
    settle_trust,
)
from tests.fakes.trust import FakeTrustLookup

EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events"

RUN_ID = "12345678901"


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def runner_env(event: str, ref: str, **extra: str) -> dict[str, str]:
    """The variables the runner gives a Docker action (the ones the context reads, and more)."""
    ref_name = ref.split("/", 2)[-1]
    env = {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_REF": ref,
        "GITHUB_REF_NAME": ref_name,
        "GITHUB_REF_TYPE": "tag" if ref.startswith("refs/tags/") else "branch",
        "GITHUB_REPOSITORY": "octo-org/octo-repo",
        "GITHUB_REPOSITORY_OWNER": "octo-org",
        "GITHUB_RUN_ID": RUN_ID,
        "GITHUB_RUN_NUMBER": "318",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_SHA": "9f1c2d3e4b5a69788766554433221100ffeeddcc",
        "GITHUB_ACTOR": "mona",
        "GITHUB_TRIGGERING_ACTOR": "mona",
        "GITHUB_WORKFLOW": "memory-agent",
        "GITHUB_JOB": "review",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_GRAPHQL_URL": "https://api.github.com/graphql",
        "GITHUB_HEAD_REF": "",
        "GITHUB_BASE_REF": "",
        "RUNNER_OS": "Linux",
        "RUNNER_TEMP": "/github/runner_temp",  # as a Docker action sees it
        "INPUT_MEMORY_SCOPE": "repo",
    }
    env.update(extra)
    return env


# Each fixture with the environment the runner gives it.
CASES: dict[str, tuple[str, dict[str, str]]] = {
    "pull_request_opened_same_repo": (
        "pull_request_opened_same_repo",
        runner_env(
            "pull_request",
            "refs/pull/42/merge",
            GITHUB_HEAD_REF="feature/retry",
            GITHUB_BASE_REF="main",
        ),
    ),
    "pull_request_synchronize_fork": (
        "pull_request_synchronize_fork",
        runner_env(
            "pull_request",
            "refs/pull/57/merge",
            GITHUB_HEAD_REF="patch-1",
            GITHUB_BASE_REF="main",
            GITHUB_ACTOR="outside-dev",
        ),
    ),
    "pull_request_target_fork": (
        "pull_request_target_fork",
        runner_env(
            "pull_request_target",
            "refs/heads/main",
            GITHUB_HEAD_REF="patch-1",
            GITHUB_BASE_REF="main",
            GITHUB_ACTOR="outside-dev",
        ),
    ),
    "push_main": ("push_main", runner_env("push", "refs/heads/main")),
    "push_feature_branch": ("push_feature_branch", runner_env("push", "refs/heads/feature/retry")),
    "schedule": ("schedule", runner_env("schedule", "refs/heads/main", GITHUB_ACTOR="mona")),
    "workflow_dispatch": ("workflow_dispatch", runner_env("workflow_dispatch", "refs/heads/main")),
    "issue_comment_pr_collaborator": (
        "issue_comment_pr_collaborator",
        runner_env("issue_comment", "refs/heads/main", GITHUB_ACTOR="hubot"),
    ),
    "issue_comment_pr_non_collaborator": (
        "issue_comment_pr_non_collaborator",
        runner_env("issue_comment", "refs/heads/main", GITHUB_ACTOR="outside-dev"),
    ),
    "pull_request_review_comment_reply": (
        "pull_request_review_comment_reply",
        runner_env(
            "pull_request_review_comment",
            "refs/pull/42/merge",
            GITHUB_HEAD_REF="feature/retry",
            GITHUB_BASE_REF="main",
            GITHUB_ACTOR="hubot",
        ),
    ),
}


def context_of(case: str, **env_overrides: str) -> RunContext:
    """The context as ``main()`` builds it: settled by a lookup where mona and hubot may write."""
    name, env = CASES[case]
    return settle_trust(load_context({**env, **env_overrides}, payload(name)), FakeTrustLookup())


def settled(case: str, data: dict[str, Any], lookup: FakeTrustLookup | None = None) -> RunContext:
    return settle_trust(load_context(CASES[case][1], data), lookup or FakeTrustLookup())


# -- the trust table -------------------------------------------------------------------------

READ_ONLY = "runs get a read-only cache token"

TRUSTED, UNTRUSTED = Trust.TRUSTED, Trust.UNTRUSTED
FORK_NOTE = "the pull request comes from a fork"

# case: (trust, may_write, write_note, (PR number, is_fork) or None)
TRUST_TABLE: dict[str, tuple[Trust, bool, str, tuple[int, bool] | None]] = {
    "pull_request_opened_same_repo": (TRUSTED, True, "", (42, False)),
    "pull_request_synchronize_fork": (UNTRUSTED, False, FORK_NOTE, (57, True)),
    "pull_request_target_fork": (UNTRUSTED, False, f"pull_request_target {READ_ONLY}", (57, True)),
    "push_main": (TRUSTED, True, "", None),
    # The context trusts the pusher; whether a branch may write a scope is scope.py's decision.
    "push_feature_branch": (TRUSTED, True, "", None),
    "schedule": (TRUSTED, True, "", None),
    "workflow_dispatch": (TRUSTED, True, "", None),
    "issue_comment_pr_collaborator": (TRUSTED, False, f"issue_comment {READ_ONLY}", (42, False)),
    "issue_comment_pr_non_collaborator": (
        UNTRUSTED,
        False,
        f"issue_comment {READ_ONLY}",
        (42, False),
    ),
    # A reply runs on the pull request's merge ref: its cache token may write.
    "pull_request_review_comment_reply": (TRUSTED, True, "", (42, False)),
}


@pytest.mark.parametrize("case", TRUST_TABLE)
def test_trust_table(case: str) -> None:
    trust, may_write, note, pull_request = TRUST_TABLE[case]
    context = context_of(case)
    assert (context.trust, context.may_write, context.write_note) == (trust, may_write, note)
    pr = context.pull_request
    assert (None if pr is None else (pr.number, pr.is_fork)) == pull_request


def test_trust_table_covers_every_supported_fixture() -> None:
    assert set(TRUST_TABLE) == set(CASES)


def test_pull_request_target_from_the_same_repository_is_trusted_but_read_only() -> None:
    data = payload("pull_request_target_fork")
    data["pull_request"]["head"]["repo"] = copy.deepcopy(data["repository"])
    data["pull_request"]["author_association"] = "MEMBER"
    data["pull_request"]["user"]["login"] = "mona"
    context = settled("pull_request_target_fork", data)
    assert context.pull_request is not None
    assert not context.pull_request.is_fork
    assert (context.trust, context.may_write) == (Trust.TRUSTED, False)
    assert context.write_note == f"pull_request_target {READ_ONLY}"


# -- fork detection --------------------------------------------------------------------------


def _with_head_repo(head_repo: object) -> dict[str, Any]:
    data = payload("pull_request_opened_same_repo")
    data["pull_request"]["head"]["repo"] = head_repo
    return data


FORKS = [
    pytest.param({"full_name": "octo-org/octo-repo"}, False, id="same-repo"),
    pytest.param({"full_name": "Octo-Org/Octo-Repo"}, False, id="same-repo-other-case"),
    pytest.param({"full_name": "OCTO-ORG/octo-repo"}, False, id="same-repo-upper-owner"),
    pytest.param({"full_name": "outside-dev/octo-repo"}, True, id="fork-other-owner"),
    pytest.param({"full_name": "octo-org/octo-repo-fork"}, True, id="fork-same-owner-other-name"),
    pytest.param({"full_name": "octo-org/octo-rep"}, True, id="fork-name-is-a-prefix"),
    pytest.param(None, True, id="deleted-fork-head-repo-null"),
    pytest.param({"id": 8823401}, True, id="head-repo-without-full-name"),
]


@pytest.mark.parametrize(("head_repo", "is_fork"), FORKS)
def test_fork_detection(head_repo: object, is_fork: bool) -> None:
    context = settled("pull_request_opened_same_repo", _with_head_repo(head_repo))
    assert context.pull_request is not None
    assert context.pull_request.is_fork is is_fork
    assert context.may_write is not is_fork
    assert context.trust is (Trust.UNTRUSTED if is_fork else Trust.TRUSTED)


def test_a_deleted_fork_has_no_head_repo_name() -> None:
    context = load_context(CASES["pull_request_opened_same_repo"][1], _with_head_repo(None))
    assert context.pull_request is not None
    assert context.pull_request.head_repo == ""
    assert context.write_note == "the pull request comes from a fork"


def test_the_head_missing_entirely_is_malformed() -> None:
    data = payload("pull_request_opened_same_repo")
    del data["pull_request"]["head"]
    with pytest.raises(EventError, match=r"pull_request|head"):
        load_context(CASES["pull_request_opened_same_repo"][1], data)


# -- author_association ----------------------------------------------------------------------

ASSOCIATIONS = [
    ("OWNER", True),
    ("MEMBER", True),
    ("COLLABORATOR", True),
    ("member", True),
    ("Collaborator", True),
    ("CONTRIBUTOR", False),
    ("FIRST_TIME_CONTRIBUTOR", False),
    ("FIRST_TIMER", False),
    ("MANNEQUIN", False),
    ("NONE", False),
    (None, False),
]


@pytest.mark.parametrize(
    ("association", "trusted"), ASSOCIATIONS, ids=[str(a) for a, _ in ASSOCIATIONS]
)
def test_same_repo_pull_request_author_association(association: str | None, trusted: bool) -> None:
    data = payload("pull_request_opened_same_repo")
    data["pull_request"]["author_association"] = association
    lookup = FakeTrustLookup()
    context = settled("pull_request_opened_same_repo", data, lookup)
    assert context.pull_request is not None
    assert context.pull_request.author_association == (association or "NONE").upper()
    # An association that never has write access is not worth asking GitHub about.
    assert lookup.asked == (["permission mona"] if trusted else [])
    assert context.trust is (Trust.TRUSTED if trusted else Trust.UNTRUSTED)
    assert context.may_write is trusted
    if not trusted:
        assert context.write_note == (
            "the pull request comes from an author without write access "
            f"({(association or 'NONE').upper()})"
        )


def test_missing_author_association_counts_as_none() -> None:
    data = payload("pull_request_opened_same_repo")
    del data["pull_request"]["author_association"]
    context = load_context(CASES["pull_request_opened_same_repo"][1], data)
    assert context.pull_request is not None
    assert context.pull_request.author_association == "NONE"
    assert (context.trust, context.may_write) == (Trust.UNTRUSTED, False)


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_a_fork_is_untrusted_whoever_opened_it(association: str) -> None:
    data = payload("pull_request_synchronize_fork")
    data["pull_request"]["author_association"] = association
    context = load_context(CASES["pull_request_synchronize_fork"][1], data)
    assert (context.trust, context.may_write) == (Trust.UNTRUSTED, False)
    assert context.write_note == "the pull request comes from a fork"


@pytest.mark.parametrize(
    ("association", "trusted"), ASSOCIATIONS, ids=[str(a) for a, _ in ASSOCIATIONS]
)
def test_issue_comment_trust_follows_the_commenter(association: str | None, trusted: bool) -> None:
    data = payload("issue_comment_pr_collaborator")
    data["comment"]["author_association"] = association
    context = settled("issue_comment_pr_collaborator", data)
    assert context.comment_author_association == (association or "NONE").upper()
    assert context.trust is (Trust.TRUSTED if trusted else Trust.UNTRUSTED)
    assert context.may_write is False
    assert context.write_note == f"issue_comment {READ_ONLY}"


def test_issue_comment_trust_ignores_the_pull_request_author() -> None:
    data = payload("issue_comment_pr_non_collaborator")
    data["issue"]["author_association"] = "OWNER"
    context = settled("issue_comment_pr_non_collaborator", data)
    assert context.trust is Trust.UNTRUSTED


def test_issue_comment_carries_the_comment_and_the_pull_request() -> None:
    context = context_of("issue_comment_pr_collaborator")
    assert context.comment_body == "@memory-agent remember we use pytest fixtures, not setUp"
    assert context.comment_author_association == "COLLABORATOR"
    pr = context.pull_request
    assert pr is not None
    assert (pr.number, pr.author, pr.author_association) == (42, "mona", "MEMBER")
    assert context.comment_author == "hubot"
    # The payload does not say where the pull request comes from: GitHub is asked.
    assert (pr.head_repo, pr.is_fork) == ("octo-org/octo-repo", False)
    assert (pr.base_ref, pr.head_ref, pr.head_sha) == ("", "", "")


# -- replies to review comments (pull_request_review_comment) --------------------------------

REPLY = "pull_request_review_comment_reply"


def test_a_review_comment_reply_carries_the_comment_and_the_pull_request() -> None:
    lookup = FakeTrustLookup()
    context = settled(REPLY, payload(REPLY), lookup)
    assert context.comment_body.startswith("Intended: the retry is bounded")
    assert (context.comment_author, context.comment_author_association) == (
        "hubot",
        "COLLABORATOR",
    )
    assert context.reply_to == 2100000070
    pr = context.pull_request
    assert pr is not None
    assert (pr.number, pr.author, pr.head_ref, pr.is_fork) == (42, "mona", "feature/retry", False)
    # The payload names the head repository: only the commenter's permission is asked.
    assert lookup.asked == ["permission hubot"]


@pytest.mark.parametrize(
    ("association", "trusted"), ASSOCIATIONS, ids=[str(a) for a, _ in ASSOCIATIONS]
)
def test_review_comment_trust_follows_the_commenter(association: str | None, trusted: bool) -> None:
    data = payload(REPLY)
    data["comment"]["author_association"] = association
    context = settled(REPLY, data)
    assert context.trust is (Trust.TRUSTED if trusted else Trust.UNTRUSTED)
    assert context.may_write is trusted
    if not trusted:
        association = (association or "NONE").upper()
        assert context.write_note == (
            f"the comment comes from someone without write access ({association})"
        )


REVIEW_COMMENT_TRUST = [
    # commenter, who may write, the PR author's association, a fork's head (None: ours), and
    # the expected (trust, may write, write note)
    pytest.param("hubot", {"hubot"}, "MEMBER", None, (TRUSTED, True, ""), id="writer-reply"),
    pytest.param(
        "hubot",
        set(),
        "MEMBER",
        None,
        (UNTRUSTED, False, "the comment comes from someone without write access (COLLABORATOR)"),
        id="triage-only-commenter",
    ),
    pytest.param(
        "hubot", {"hubot"}, "NONE", None, (TRUSTED, True, ""), id="pull-request-author-ignored"
    ),
    pytest.param(
        "hubot",
        {"hubot"},
        "MEMBER",
        "outside-dev/octo-repo",
        (UNTRUSTED, False, FORK_NOTE),
        id="maintainer-on-a-fork",
    ),
]


@pytest.mark.parametrize(
    ("commenter", "writers", "author_association", "head", "expected"), REVIEW_COMMENT_TRUST
)
def test_review_comment_trust_table(
    commenter: str,
    writers: set[str],
    author_association: str,
    head: str | None,
    expected: tuple[Trust, bool, str],
) -> None:
    data = payload(REPLY)
    data["comment"]["user"]["login"] = commenter
    data["pull_request"]["author_association"] = author_association
    if head is not None:
        data["pull_request"]["head"]["repo"]["full_name"] = head
    lookup = FakeTrustLookup(writers=writers)
    context = settled(REPLY, data, lookup)
    assert (context.trust, context.may_write, context.write_note) == expected
    # Nobody's permission is asked about a fork's run: it is untrusted whoever commented.
    assert lookup.asked == ([] if head else [f"permission {commenter}"])


def test_no_review_comment_is_trusted_before_github_confirms_the_commenter() -> None:
    context = load_context(CASES[REPLY][1], payload(REPLY))
    assert (context.trust, context.may_write) == (Trust.UNTRUSTED, False)
    assert context.write_note == (
        "the comment comes from someone whose write access GitHub did not confirm (COLLABORATOR)"
    )


def _opening_a_thread(data: dict[str, Any]) -> dict[str, Any]:
    del data["comment"]["in_reply_to_id"]
    return data


def _by_a_bot(data: dict[str, Any]) -> dict[str, Any]:
    data["comment"]["user"] = {"login": "memory-agent-app[bot]", "type": "Bot"}
    return data


def _with_action(action: str) -> Any:
    return lambda data: _set(data, action, "action")


REVIEW_COMMENT_SKIPPED = [
    pytest.param(_opening_a_thread, "that opens a thread (not a reply)", id="not-a-reply"),
    pytest.param(
        lambda d: _set(d, None, "comment", "in_reply_to_id"),
        "that opens a thread",
        id="reply-to-null",
    ),
    pytest.param(_by_a_bot, "written by a bot (memory-agent-app[bot])", id="bot-comment"),
    pytest.param(_with_action("edited"), "with action 'edited'", id="edited"),
    pytest.param(_with_action("deleted"), "with action 'deleted'", id="deleted"),
]


@pytest.mark.parametrize(("edit", "says"), REVIEW_COMMENT_SKIPPED)
def test_review_comments_that_are_no_request_end_with_a_notice(edit: Any, says: str) -> None:
    with pytest.raises(UnsupportedEvent) as caught:
        load_context(CASES[REPLY][1], edit(payload(REPLY)))
    assert f"pull_request_review_comment {says}" in str(caught.value)
    assert "\n" not in str(caught.value)


REVIEW_COMMENT_MALFORMED = [
    pytest.param(lambda d: _drop(d, "comment"), "'comment'", id="no-comment"),
    pytest.param(lambda d: _set(d, "x", "comment"), "'comment' is not an object", id="comment-str"),
    pytest.param(
        lambda d: _set(d, "2100000070", "comment", "in_reply_to_id"),
        "'comment.in_reply_to_id' is not a positive number",
        id="reply-to-as-string",
    ),
    pytest.param(lambda d: _drop(d, "pull_request"), "'pull_request'", id="no-pull-request"),
]


@pytest.mark.parametrize(("edit", "says"), REVIEW_COMMENT_MALFORMED)
def test_a_malformed_review_comment_is_an_event_error(edit: Any, says: str) -> None:
    with pytest.raises(EventError) as caught:
        load_context(CASES[REPLY][1], edit(payload(REPLY)))
    assert says in str(caught.value)


# -- trust from the repository permission (GitHub is asked) ---------------------------------


@pytest.mark.parametrize("case", ["pull_request_opened_same_repo", "issue_comment_pr_collaborator"])
def test_no_person_is_trusted_before_github_confirms_their_permission(case: str) -> None:
    name, env = CASES[case]
    context = load_context(env, payload(name))
    assert (context.trust, context.may_write) == (Trust.UNTRUSTED, False)


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_an_author_who_may_only_read_or_triage_is_untrusted(association: str) -> None:
    # An organisation member with read access, or a collaborator with the triage role.
    data = payload("pull_request_opened_same_repo")
    data["pull_request"]["author_association"] = association
    lookup = FakeTrustLookup(writers=set())
    context = settled("pull_request_opened_same_repo", data, lookup)
    assert (context.trust, context.may_write) == (Trust.UNTRUSTED, False)
    assert context.write_note == (
        f"the pull request comes from an author without write access ({association})"
    )
    assert lookup.asked == ["permission mona"]


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_a_commenter_who_may_only_read_or_triage_is_untrusted(association: str) -> None:
    data = payload("issue_comment_pr_collaborator")
    data["comment"]["author_association"] = association
    lookup = FakeTrustLookup(writers={"mona"})  # the pull request's author, not the commenter
    context = settled("issue_comment_pr_collaborator", data, lookup)
    assert context.trust is Trust.UNTRUSTED
    assert lookup.asked == ["head #42", "permission hubot"]


@pytest.mark.parametrize("head", ["outside-dev/octo-repo", "", None])
def test_a_comment_on_a_fork_pull_request_is_untrusted_whoever_asked(head: str | None) -> None:
    # A maintainer's "please re-review" on a fork still runs the agent over the fork's diff. A
    # deleted fork ("") or a head GitHub did not name (None) counts as a fork.
    lookup = FakeTrustLookup(heads={42: head})
    context = settled(
        "issue_comment_pr_collaborator", payload("issue_comment_pr_collaborator"), lookup
    )
    assert context.pull_request is not None
    assert context.pull_request.is_fork
    assert context.trust is Trust.UNTRUSTED
    assert lookup.asked == ["head #42"]  # the commenter's permission does not matter


@pytest.mark.parametrize("event", ["issue_comment", "pull_request", "pull_request_target"])
def test_the_table_never_trusts_a_fork_even_for_a_writer(event: str) -> None:
    fork = context_of("pull_request_synchronize_fork").pull_request
    trust, may_write, _ = decide_trust(event, fork, "OWNER", writer=True)
    assert (trust, may_write) == (Trust.UNTRUSTED, False)


def test_a_commented_pull_request_is_a_fork_until_github_says_otherwise() -> None:
    name, env = CASES["issue_comment_pr_collaborator"]
    pr = load_context(env, payload(name)).pull_request
    assert pr is not None
    assert pr.is_fork


def test_runs_without_a_pull_request_ask_nothing() -> None:
    lookup = FakeTrustLookup(writers=set())
    context = settle_trust(load_context(CASES["push_main"][1], payload("push_main")), lookup)
    assert (context.trust, context.may_write, lookup.asked) == (Trust.TRUSTED, True, [])


def test_a_fork_pull_request_asks_nothing() -> None:
    lookup = FakeTrustLookup()
    context = context_of("pull_request_synchronize_fork")
    assert settle_trust(context, lookup).trust is Trust.UNTRUSTED
    assert lookup.asked == []


@pytest.mark.parametrize("writer", [True, False, None])
@pytest.mark.parametrize("association", ["NONE", "CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN"])
def test_an_association_without_write_access_is_never_trusted(
    association: str, writer: bool | None
) -> None:
    pr = context_of("pull_request_opened_same_repo").pull_request
    trust, may_write, _ = decide_trust("pull_request", pr, association, writer)
    assert (trust, may_write) == (Trust.UNTRUSTED, False)


def test_events_without_a_comment_have_empty_comment_fields() -> None:
    context = context_of("pull_request_opened_same_repo")
    assert (context.comment_body, context.comment_author_association) == ("", "")


# -- the rest of the context -----------------------------------------------------------------


def test_pull_request_context_fields() -> None:
    context = context_of("pull_request_opened_same_repo")
    assert context.event_name == "pull_request"
    assert context.action == "opened"
    assert context.repository == "octo-org/octo-repo"
    assert context.owner == "octo-org"
    assert context.ref == "refs/pull/42/merge"
    assert context.branch is None
    assert context.on_default_branch is False
    assert context.default_branch == "main"
    assert context.sha == "9f1c2d3e4b5a69788766554433221100ffeeddcc"
    assert (context.run_id, context.run_attempt) == (RUN_ID, "1")
    assert context.actor == "mona"
    assert context.workspace == Path("/github/workspace")
    assert context.server_url == "https://github.com"
    assert context.api_url == "https://api.github.com"
    assert context.run_url == f"https://github.com/octo-org/octo-repo/actions/runs/{RUN_ID}"
    pr = context.pull_request
    assert pr is not None
    assert pr.number == 42
    assert pr.head_repo == "octo-org/octo-repo"
    assert (pr.base_ref, pr.head_ref) == ("main", "feature/retry")
    assert pr.head_sha == "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    assert (pr.author, pr.author_association, pr.is_fork) == ("mona", "MEMBER", False)


def test_fork_pull_request_fields() -> None:
    pr = context_of("pull_request_synchronize_fork").pull_request
    assert pr is not None
    assert (pr.number, pr.head_repo, pr.head_ref, pr.base_ref) == (
        57,
        "outside-dev/octo-repo",
        "patch-1",
        "main",
    )
    assert (pr.author, pr.author_association) == ("outside-dev", "FIRST_TIME_CONTRIBUTOR")


BRANCHES = [
    ("push_main", "main", True),
    ("push_feature_branch", "feature/retry", False),
    ("schedule", "main", True),
    ("workflow_dispatch", "main", True),
    ("pull_request_target_fork", "main", True),
    ("issue_comment_pr_collaborator", "main", True),
    ("pull_request_opened_same_repo", None, False),
]


@pytest.mark.parametrize(
    ("case", "branch", "on_default"), BRANCHES, ids=[row[0] for row in BRANCHES]
)
def test_branch_and_default_branch(case: str, branch: str | None, on_default: bool) -> None:
    context = context_of(case)
    assert context.branch == branch
    assert context.on_default_branch is on_default


def test_workflow_dispatch_on_a_feature_branch() -> None:
    context = context_of("workflow_dispatch", GITHUB_REF="refs/heads/feature/retry")
    assert (context.branch, context.on_default_branch) == ("feature/retry", False)
    assert (context.trust, context.may_write) == (Trust.TRUSTED, True)


@pytest.mark.parametrize(
    ("ref", "default_branch"),
    [
        pytest.param("refs/heads/main", "main", id="main"),
        pytest.param("refs/heads/master", "master", id="master"),
        pytest.param("refs/heads/develop", "develop", id="develop"),
    ],
)
def test_schedule_payload_without_repository_takes_the_default_branch_from_the_ref(
    ref: str, default_branch: str
) -> None:
    # A scheduled run always runs on the default branch, and its payload may hold only the cron
    # line: the ref is then the only place that names the default branch.
    context = context_of("schedule", GITHUB_REF=ref)
    assert context.default_branch == default_branch
    assert context.on_default_branch is True


def test_schedule_payload_with_repository_uses_its_default_branch() -> None:
    data = payload("schedule")
    data["repository"] = payload("workflow_dispatch")["repository"]
    context = load_context(runner_env("schedule", "refs/heads/main"), data)
    assert context.default_branch == "main"


def test_repository_comes_from_the_payload_when_the_variable_is_missing() -> None:
    env = dict(CASES["push_main"][1])
    del env["GITHUB_REPOSITORY"]
    assert load_context(env, payload("push_main")).repository == "octo-org/octo-repo"


def test_repository_missing_everywhere_is_an_event_error() -> None:
    env = dict(CASES["schedule"][1])
    del env["GITHUB_REPOSITORY"]
    with pytest.raises(EventError, match=r"repository\.full_name"):
        load_context(env, payload("schedule"))


def test_defaults_for_a_sparse_environment() -> None:
    env = {"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main"}
    context = load_context(env, payload("push_main"))
    assert context.server_url == "https://github.com"
    assert context.api_url == "https://api.github.com"
    assert (context.run_id, context.run_attempt) == ("0", "1")
    assert context.actor == ""
    assert context.sha == ""
    assert context.workspace == Path.cwd()


def test_enterprise_urls_lose_their_trailing_slash() -> None:
    context = context_of(
        "push_main",
        GITHUB_SERVER_URL="https://ghe.example.com/",
        GITHUB_API_URL="https://ghe.example.com/api/v3/",
    )
    assert context.server_url == "https://ghe.example.com"
    assert context.api_url == "https://ghe.example.com/api/v3"
    assert context.run_url == f"https://ghe.example.com/octo-org/octo-repo/actions/runs/{RUN_ID}"


def test_a_rerun_keeps_its_attempt() -> None:
    assert context_of("push_main", GITHUB_RUN_ATTEMPT="3").run_attempt == "3"


def test_the_context_is_frozen() -> None:
    context = context_of("push_main")
    with pytest.raises(AttributeError):
        context.may_write = False  # type: ignore[misc]


# -- unsupported events ----------------------------------------------------------------------

UNSUPPORTED = [
    (
        "pull_request_closed",
        "pull_request",
        "refs/pull/42/merge",
        "pull_request with action 'closed'",
    ),
    ("push_tag", "push", "refs/tags/v1.2.0", "push on 'refs/tags/v1.2.0'"),
    ("issue_comment_edited", "issue_comment", "refs/heads/main", "action 'edited'"),
    ("release_published", "release", "refs/tags/v1.2.0", "the event 'release'"),
]


@pytest.mark.parametrize(
    ("name", "event", "ref", "says"), UNSUPPORTED, ids=[row[0] for row in UNSUPPORTED]
)
def test_unsupported_event(name: str, event: str, ref: str, says: str) -> None:
    with pytest.raises(UnsupportedEvent) as caught:
        load_context(runner_env(event, ref), payload(name))
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_comment_on_an_issue_has_no_pull_request_but_its_number_and_comment() -> None:
    """Only a comment command is handled there (``command_run.route`` decides)."""
    context = load_context(
        runner_env("issue_comment", "refs/heads/main"), payload("issue_comment_issue")
    )
    assert context.pull_request is None
    assert context.issue_number == payload("issue_comment_issue")["issue"]["number"]
    assert context.trust is Trust.UNTRUSTED and not context.may_write


UNSUPPORTED_VARIANTS = [
    pytest.param("pull_request_opened_same_repo", "labeled", "pull_request", id="pr-labeled"),
    pytest.param("pull_request_opened_same_repo", "edited", "pull_request", id="pr-edited"),
    pytest.param("pull_request_target_fork", "closed", "pull_request_target", id="prt-closed"),
    pytest.param("issue_comment_pr_collaborator", "deleted", "issue_comment", id="comment-deleted"),
]


@pytest.mark.parametrize(("name", "action", "event"), UNSUPPORTED_VARIANTS)
def test_unsupported_action(name: str, action: str, event: str) -> None:
    data = payload(name)
    data["action"] = action
    with pytest.raises(UnsupportedEvent, match=f"{event} with action '{action}'"):
        load_context(CASES[name][1], data)


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened", "ready_for_review"])
def test_supported_pull_request_actions(action: str) -> None:
    data = payload("pull_request_opened_same_repo")
    data["action"] = action
    assert load_context(CASES["pull_request_opened_same_repo"][1], data).action == action


@pytest.mark.parametrize(
    ("event", "ref"),
    [
        pytest.param("workflow_dispatch", "refs/tags/v1.2.0", id="dispatch-on-tag"),
        pytest.param("schedule", "", id="schedule-without-ref"),
        pytest.param("repository_dispatch", "refs/pull/42/merge", id="repository-dispatch-on-pr"),
    ],
)
def test_branch_events_off_a_branch_are_unsupported(event: str, ref: str) -> None:
    with pytest.raises(UnsupportedEvent, match="only branches are handled"):
        load_context(runner_env(event, ref), payload("workflow_dispatch"))


@pytest.mark.parametrize(
    "event",
    ["", "workflow_run", "pull_request_review", "merge_group", "PUSH"],
    ids=["missing", "workflow_run", "pull_request_review", "merge_group", "wrong-case"],
)
def test_other_events_are_unsupported(event: str) -> None:
    env = runner_env(event, "refs/heads/main")
    if not event:
        del env["GITHUB_EVENT_NAME"]
    with pytest.raises(UnsupportedEvent, match="the event"):
        load_context(env, payload("push_main"))


def test_repository_dispatch_on_the_default_branch_is_trusted() -> None:
    data = {
        "action": "memory-maintenance",
        "branch": "main",
        "client_payload": {"reason": "nightly"},
        "repository": payload("push_main")["repository"],
        "sender": payload("push_main")["sender"],
    }
    context = load_context(runner_env("repository_dispatch", "refs/heads/main"), data)
    assert (context.trust, context.may_write, context.on_default_branch) == (
        Trust.TRUSTED,
        True,
        True,
    )


# -- malformed payloads ----------------------------------------------------------------------


def _drop(data: dict[str, Any], *path: str) -> dict[str, Any]:
    node = data
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return data


def _set(data: dict[str, Any], value: object, *path: str) -> dict[str, Any]:
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return data


PR = "pull_request_opened_same_repo"
COMMENT = "issue_comment_pr_collaborator"
MALFORMED = [
    pytest.param(PR, lambda d: _drop(d, "pull_request"), "'pull_request'", id="no-pull-request"),
    pytest.param(PR, lambda d: _set(d, [], "pull_request"), "not an object", id="pr-is-a-list"),
    pytest.param(PR, lambda d: _set(d, None, "pull_request"), "not an object", id="pr-is-null"),
    pytest.param(
        PR, lambda d: _drop(d, "pull_request", "number"), "'number'", id="pr-without-number"
    ),
    pytest.param(
        PR,
        lambda d: _set(d, "42", "pull_request", "number"),
        "'pull_request.number' is not a positive number",
        id="pr-number-as-string",
    ),
    pytest.param(
        PR, lambda d: _set(d, 0, "pull_request", "number"), "positive number", id="pr-number-0"
    ),
    pytest.param(
        PR, lambda d: _set(d, -3, "pull_request", "number"), "positive number", id="pr-number-neg"
    ),
    pytest.param(
        PR,
        lambda d: _set(d, 4.2, "pull_request", "number"),
        "positive number",
        id="pr-number-float",
    ),
    pytest.param(
        PR,
        lambda d: _set(d, True, "pull_request", "number"),
        "positive number",
        id="pr-number-bool",
    ),
    pytest.param(
        PR,
        lambda d: _drop(d, "pull_request", "base", "ref"),
        "'base.ref'",
        id="pr-without-base-ref",
    ),
    pytest.param(
        PR,
        lambda d: _drop(d, "pull_request", "head", "sha"),
        "'head.sha'",
        id="pr-without-head-sha",
    ),
    pytest.param(
        PR,
        lambda d: _set(d, None, "pull_request", "base", "repo"),
        "'base.repo.full_name'",
        id="pr-base-repo-null",
    ),
    pytest.param(
        PR,
        lambda d: _set(d, {"name": "main"}, "pull_request", "base", "ref"),
        "'base.ref' is not text",
        id="pr-base-ref-object",
    ),
    pytest.param(COMMENT, lambda d: _drop(d, "issue"), "'issue'", id="comment-without-issue"),
    pytest.param(
        COMMENT,
        lambda d: _set(d, "42", "issue", "number"),
        "'issue.number' is not a positive number",
        id="comment-issue-number-as-string",
    ),
    pytest.param(
        COMMENT,
        lambda d: _drop(d, "issue", "number"),
        "'number'",
        id="comment-issue-without-number",
    ),
    pytest.param(
        COMMENT,
        lambda d: _set(d, ["x"], "comment", "body"),
        "'comment.body' is not text",
        id="comment-body-list",
    ),
]


@pytest.mark.parametrize(("name", "edit", "says"), MALFORMED)
def test_malformed_payload_is_an_event_error(name: str, edit: Any, says: str) -> None:
    data = edit(payload(name))
    with pytest.raises(EventError) as caught:
        load_context(CASES[name][1], data)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_event_error_is_an_expected_failure_with_exit_code_3() -> None:
    assert EventError("x").exit_code == 3


# -- read_event ------------------------------------------------------------------------------


def test_read_event_reads_a_fixture() -> None:
    assert read_event(str(EVENTS / "push_main.json")) == payload("push_main")


@pytest.mark.parametrize("name", sorted(p.stem for p in EVENTS.glob("*.json")))
def test_every_fixture_is_a_json_object(name: str) -> None:
    assert isinstance(read_event(str(EVENTS / f"{name}.json")), dict)


@pytest.mark.parametrize("path", [None, ""], ids=["none", "empty"])
def test_read_event_without_a_path(path: str | None) -> None:
    with pytest.raises(EventError, match="GITHUB_EVENT_PATH is not set") as caught:
        read_event(path)
    assert "\n" not in str(caught.value)


BAD_FILES = [
    pytest.param(None, "does not exist", id="missing-file"),
    pytest.param(b"", "is not valid JSON", id="empty-file"),
    pytest.param(b"not json at all\n", "is not valid JSON", id="not-json"),
    pytest.param(b'{"action": "opened",\n', "is not valid JSON", id="truncated-json"),
    pytest.param(b"\xff\xfe{}", "is not valid JSON", id="not-utf8"),
    pytest.param(b'[{"action": "opened"}]', "does not hold a JSON object", id="json-array"),
    pytest.param(b'"opened"', "does not hold a JSON object", id="json-string"),
    pytest.param(b"null", "does not hold a JSON object", id="json-null"),
]


@pytest.mark.parametrize(("content", "says"), BAD_FILES)
def test_read_event_errors_are_one_line_naming_the_file(
    tmp_path: Path, content: bytes | None, says: str
) -> None:
    path = tmp_path / "event.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(EventError) as caught:
        read_event(str(path))
    message = str(caught.value)
    assert says in message
    assert str(path) in message
    assert "\n" not in message


def test_read_event_on_a_directory_says_it_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(EventError, match="cannot be read") as caught:
        read_event(str(tmp_path))
    assert "\n" not in str(caught.value)
