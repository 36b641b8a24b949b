"""``GITHUB_*`` variables and the event payload → one typed ``RunContext``.

The context carries the trust decision of the design's table: which runs are trusted, and which
may write memory. Untrusted input (a fork's pull request, a comment by a non-collaborator) never
writes; events whose cache token is read-only (``pull_request_target``, ``issue_comment``) cannot.

Trust comes from the repository permission of the person whose input the run reads (the pull
request's author, or the commenter): ``admin``, ``maintain`` or ``write``. The payload does not
say it: ``load_context`` decides without it (an association that never has write access is
untrusted at once, every other one is untrusted until confirmed), and ``settle_trust`` asks
GitHub (``TrustLookup``) once per person and decides again. A run over a fork's content is
untrusted whoever asked for it; an ``issue_comment`` payload does not say whether the pull request
comes from a fork, so ``settle_trust`` asks that too.

A reply to a review comment (``pull_request_review_comment``, created, with ``in_reply_to_id``)
is a comment command like ``issue_comment``: its trust follows the commenter. Unlike
``issue_comment`` it runs on the pull request's merge ref, so its cache token is not read-only
and a trusted one may write the pull request's memory. A review comment that opens a thread is
someone's review, not a request to the bot, and a comment by a bot (the bot's own inline
comments among them) would make runs answer each other: both end with a notice.

An ``issue_comment`` on an issue that is no pull request has no ``pull_request`` but its
``issue_number``: only a comment command is handled there (``commands.route.route``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory_action.errors import EventError, UnsupportedEvent
from memory_action.memory.trust import Trust
from memory_action.safety import untrusted_json

if TYPE_CHECKING:  # imported by ``load_context`` once the event is one the action handles
    from memory_action.run.event_payload import Author, PullRequestFields, Writer

PR_EVENTS = ("pull_request", "pull_request_target")
PR_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")
BRANCH_EVENTS = ("push", "schedule", "workflow_dispatch", "repository_dispatch")
# Events that run in the default branch's context with a read-only cache token (2026-06-26).
READ_ONLY_CACHE_EVENTS = ("pull_request_target", "issue_comment", "workflow_run")
# Associations that never come with write access: untrusted without asking GitHub. Any other
# (OWNER, MEMBER, COLLABORATOR: an organisation member may only read, a collaborator may only
# triage) is trusted only when the person's repository permission says so.
NO_WRITE_ASSOCIATIONS = frozenset(
    {"NONE", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "CONTRIBUTOR", "MANNEQUIN"}
)
REVIEW_COMMENT = "pull_request_review_comment"
COMMENT_EVENTS = ("issue_comment", REVIEW_COMMENT)  # the comment is the run's request
SUPPORTED = (*PR_EVENTS, *BRANCH_EVENTS, *COMMENT_EVENTS)


@dataclass(frozen=True, kw_only=True)
class PullRequestRef:
    number: int
    head_repo: str  # owner/name; for issue_comment unknown until the API is asked ("")
    base_ref: str  # the branch the PR merges into
    head_ref: str
    head_sha: str
    author: str
    author_association: str
    is_fork: bool


@dataclass(frozen=True, kw_only=True)
class RunContext:
    event_name: str
    action: str  # the payload's "action" ("" when the event has none)
    repository: str  # owner/name
    server_url: str
    api_url: str
    ref: str  # GITHUB_REF: refs/heads/x, refs/pull/N/merge, refs/tags/x
    sha: str
    default_branch: str
    run_id: str
    run_attempt: str
    actor: str
    workspace: Path
    pull_request: PullRequestRef | None
    comment_body: str  # comment events only
    comment_author_association: str  # comment events only
    trust: Trust
    may_write: bool
    write_note: str  # why this run may not write ("" when it may)
    commits: tuple[str, ...] = ()  # a push's commits, head first (to find merged PRs)
    job: str = ""  # GITHUB_JOB: the job's id in the workflow (matrix legs share it)
    comment_author: str = ""  # comment events only: the commenter's login
    workflow_ref: str = ""  # GITHUB_WORKFLOW_REF: owner/name/.github/workflows/x.yml@ref
    reply_to: int | None = None  # pull_request_review_comment: the comment replied to
    before: str = ""  # pull_request synchronize: the head before the push ("" otherwise)
    comment_id: int | None = None  # comment events only: the comment that asked
    issue_number: int | None = None  # issue_comment on an issue that is no pull request
    comment_url: str = ""  # comment events only: the comment's web address

    @property
    def branch(self) -> str | None:
        """The branch a push/schedule/dispatch run is on (None for PR, tag or detached runs)."""
        prefix = "refs/heads/"
        return self.ref[len(prefix) :] if self.ref.startswith(prefix) else None

    @property
    def on_default_branch(self) -> bool:
        return self.branch == self.default_branch

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def workflow_path(self) -> str:
        """The workflow file of ``workflow_ref`` (.github/workflows/x.yml); "" when unknown."""
        named, _, _ = self.workflow_ref.partition("@")
        prefix = f"{self.repository}/"
        return named[len(prefix) :] if named.lower().startswith(prefix.lower()) else ""

    @property
    def owner(self) -> str:
        return self.repository.partition("/")[0]


def read_event(path: str | None) -> dict[str, Any]:
    """Read the event payload; a missing or malformed file is an ``EventError``."""
    if not path:
        raise EventError("GITHUB_EVENT_PATH is not set; run inside GitHub Actions or use the CLI.")
    try:
        payload = untrusted_json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EventError(f"The event file {path} does not exist.") from None
    except OSError as exc:
        raise EventError(f"The event file {path} cannot be read: {exc.strerror}.") from None
    except untrusted_json.UntrustedJsonError as exc:
        raise EventError(f"The event file {path} is refused: {exc}; GitHub's never is.") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise EventError(f"The event file {path} is not valid JSON: {exc}.") from None
    if not isinstance(payload, dict):
        raise EventError(f"The event file {path} does not hold a JSON object.")
    return payload


def _default_branch(event: str, ref: str, named: str) -> str:
    """The payload's default branch (``named``). A ``schedule`` payload may hold only the cron
    line, but a scheduled run always runs on the default branch, so its ref names it."""
    if not named and event == "schedule" and ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    return named or "main"


def _pull_request(fields: PullRequestFields, author: Author) -> PullRequestRef:
    return PullRequestRef(
        number=fields.number,
        head_repo=fields.head_repo,
        base_ref=fields.base_ref,
        head_ref=fields.head_ref,
        head_sha=fields.head_sha,
        author=author.author,
        author_association=author.author_association.upper(),
        # A deleted fork has no head repo: treat it as a fork, the safe side.
        is_fork=fields.head_repo.lower() != fields.base_repo.lower(),
    )


def _commented_pull_request(number: int, author: Author) -> PullRequestRef:
    """The pull request an ``issue_comment`` is on (an issue that is none has no pull request:
    only a comment command is handled there, ``pipeline.run`` decides)."""
    return PullRequestRef(
        number=number,
        head_repo="",
        base_ref="",
        head_ref="",
        head_sha="",
        author=author.author,
        author_association=author.author_association.upper(),
        # Unknown from the payload: a fork, the safe side, until ``settle_trust`` asks GitHub.
        is_fork=True,
    )


def _check_action(event: str, action: str) -> None:
    if event in PR_EVENTS and action not in PR_ACTIONS:
        raise UnsupportedEvent(f"{event} with action '{action}'")
    if event in COMMENT_EVENTS and action != "created":
        raise UnsupportedEvent(f"{event} with action '{action}'")


def _check_reply(writer: Writer | None, reply_to: int | None) -> int:
    """The review comment a ``pull_request_review_comment`` answers (see the module docstring);
    ``UnsupportedEvent`` for a bot's comment and for one that opens a thread."""
    if writer is not None and writer.type == "Bot":
        raise UnsupportedEvent(f"{REVIEW_COMMENT} written by a bot ({writer.login})")
    if reply_to is None:
        raise UnsupportedEvent(f"{REVIEW_COMMENT} that opens a thread (not a reply)")
    return reply_to


def decide_trust(
    event: str, pr: PullRequestRef | None, association: str, writer: bool | None
) -> tuple[Trust, bool, str]:
    """The design's table: (trust level, may this run write memory, why not).

    ``association`` is the ``author_association`` of the person whose input the run reads (the
    commenter for ``issue_comment``, else the pull request's author); ``writer`` whether their
    repository permission is admin, maintain or write (None: not asked, so not trusted).
    """
    person = association not in NO_WRITE_ASSOCIATIONS and writer is True
    if event == REVIEW_COMMENT:
        return _review_comment_trust(pr, association, writer, person)
    if event == "issue_comment":
        trusted = person and pr is not None and not pr.is_fork
        trust = Trust.TRUSTED if trusted else Trust.UNTRUSTED
        return trust, False, "issue_comment runs get a read-only cache token"
    if pr is not None and (pr.is_fork or not person):
        if event == "pull_request_target":
            return Trust.UNTRUSTED, False, "pull_request_target runs get a read-only cache token"
        who = (
            "a fork"
            if pr.is_fork
            else f"an author without write access ({association})"
            if association in NO_WRITE_ASSOCIATIONS or writer is False
            else f"an author whose write access GitHub did not confirm ({association})"
        )
        return Trust.UNTRUSTED, False, f"the pull request comes from {who}"
    if event in READ_ONLY_CACHE_EVENTS:
        return Trust.TRUSTED, False, f"{event} runs get a read-only cache token"
    return Trust.TRUSTED, True, ""


def _review_comment_trust(
    pr: PullRequestRef | None, association: str, writer: bool | None, person: bool
) -> tuple[Trust, bool, str]:
    """A reply on the pull request's merge ref: trusted, and writing, like its commenter."""
    if pr is None or pr.is_fork:
        return Trust.UNTRUSTED, False, "the pull request comes from a fork"
    if person:
        return Trust.TRUSTED, True, ""
    who = (
        "without write access"
        if association in NO_WRITE_ASSOCIATIONS or writer is False
        else "whose write access GitHub did not confirm"
    )
    return Trust.UNTRUSTED, False, f"the comment comes from someone {who} ({association})"


def fork_writable_ref(context: RunContext) -> str:
    """The cache scope a fork's own workflow runs can write that this run's cache token reads
    first: the merge ref of a fork's pull request, when the run runs on it ("" otherwise).
    Committed memory is never read from it (``layers.restore_committed``)."""
    pr = context.pull_request
    if pr is None or not pr.is_fork or not context.ref.startswith("refs/pull/"):
        return ""
    return context.ref


class TrustLookup(Protocol):
    """What GitHub knows and the event payload does not (``GitHubClient`` answers)."""

    def has_write_access(self, login: str) -> bool:
        """Whether ``login``'s repository permission is admin, maintain or write; False when
        GitHub does not say."""
        ...

    def head_repository(self, pr_number: int) -> str | None:
        """The pull request's head repository (owner/name); "" for a deleted fork, None when
        GitHub does not say."""
        ...


def _person(context: RunContext) -> tuple[str, str]:
    """(login, association) of the person whose input the run reads."""
    pr = context.pull_request
    if context.event_name in COMMENT_EVENTS:
        return context.comment_author, context.comment_author_association
    return (pr.author, pr.author_association) if pr is not None else ("", "")


def commenter_may_write(context: RunContext, lookup: TrustLookup) -> bool:
    """Whether the person who wrote the comment of a comment event has write access (what
    lets a comment command change memory: the command is their own words, whatever the pull
    request's origin)."""
    login, association = context.comment_author, context.comment_author_association
    if context.event_name not in COMMENT_EVENTS or not login:
        return False
    return association not in NO_WRITE_ASSOCIATIONS and lookup.has_write_access(login)


def settle_trust(context: RunContext, lookup: TrustLookup) -> RunContext:
    """The context with the trust decision GitHub's answers allow (see the module docstring).

    Asks only what the decision needs: nothing for runs without a pull request, nothing about a
    person whose association already rules out write access or who asked about a fork.
    """
    pr = context.pull_request
    if pr is None:
        return context
    if context.event_name == "issue_comment":
        head = lookup.head_repository(pr.number)
        same = head is not None and head.lower() == context.repository.lower()
        pr = dataclasses.replace(pr, head_repo=head or "", is_fork=not same)
    login, association = _person(context)
    writer: bool | None = None
    if login and not pr.is_fork and association not in NO_WRITE_ASSOCIATIONS:
        writer = lookup.has_write_access(login)
    trust, may_write, note = decide_trust(context.event_name, pr, association, writer)
    return dataclasses.replace(
        context, pull_request=pr, trust=trust, may_write=may_write, write_note=note
    )


def load_context(env: Mapping[str, str], payload: Mapping[str, Any]) -> RunContext:
    """Build the context; ``UnsupportedEvent`` for events and actions the action ignores."""
    event = env.get("GITHUB_EVENT_NAME", "")
    if event not in SUPPORTED:
        raise UnsupportedEvent(f"the event '{event or 'unknown'}'")
    # The payload's models need pydantic (a tenth of a second): an unhandled event goes without.
    from memory_action.run import event_payload  # noqa: PLC0415

    action = event_payload.action(payload)
    _check_action(event, action)
    ref = env.get("GITHUB_REF", "")
    if event in BRANCH_EVENTS and not ref.startswith("refs/heads/"):
        raise UnsupportedEvent(f"{event} on '{ref or 'no ref'}' (only branches are handled)")
    pr: PullRequestRef | None = None
    reply_to: int | None = None
    issue_number: int | None = None
    comment = event_payload.CommentFields()
    if event in PR_EVENTS:
        pr = _pull_request(*event_payload.pull_request(payload))
    elif event == REVIEW_COMMENT:
        writer = event_payload.review_comment_writer(payload)
        reply_to = _check_reply(writer, event_payload.reply_to(payload))
        pr = _pull_request(*event_payload.pull_request(payload))
    elif event == "issue_comment":
        issue = event_payload.commented_issue(payload)
        if issue.pull_request:
            pr = _commented_pull_request(issue.number, event_payload.issue_author(payload))
        else:
            issue_number = issue.number
    if event in COMMENT_EVENTS:
        comment = event_payload.comment(payload)
    comment_association = comment.author_association.upper() if event in COMMENT_EVENTS else ""
    association = comment_association if pr is None or event in COMMENT_EVENTS else ""
    association = association or (pr.author_association if pr is not None else "")
    # No one's permission is known yet: ``settle_trust`` decides again once GitHub has answered.
    trust, may_write, note = decide_trust(event, pr, association, writer=None)
    repository = env.get("GITHUB_REPOSITORY") or event_payload.repository_name(payload)
    default_branch = _default_branch(event, ref, event_payload.default_branch(payload))
    before = event_payload.before(payload) if event in PR_EVENTS else ""
    link = (
        event_payload.comment_link(payload)
        if event in COMMENT_EVENTS
        else event_payload.CommentLink()
    )
    pushed = event_payload.push_commit_shas(payload) if event == "push" else []
    return RunContext(
        event_name=event,
        action=action,
        repository=repository,
        server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
        api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
        ref=ref,
        sha=env.get("GITHUB_SHA", ""),
        default_branch=default_branch,
        run_id=env.get("GITHUB_RUN_ID", "0"),
        run_attempt=env.get("GITHUB_RUN_ATTEMPT", "1"),
        actor=env.get("GITHUB_ACTOR", ""),
        workspace=Path(env.get("GITHUB_WORKSPACE") or Path.cwd()),
        pull_request=pr,
        comment_body=comment.body if event in COMMENT_EVENTS else "",
        comment_author_association=comment_association,
        trust=trust,
        may_write=may_write,
        write_note=note,
        commits=_pushed_commits(event, pushed, env.get("GITHUB_SHA", "")),
        job=env.get("GITHUB_JOB", ""),
        comment_author=comment.author if event in COMMENT_EVENTS else "",
        workflow_ref=env.get("GITHUB_WORKFLOW_REF", ""),
        reply_to=reply_to,
        before=before,
        comment_id=link.id,
        issue_number=issue_number,
        comment_url=link.url,
    )


def _pushed_commits(event: str, shas: list[str], sha: str) -> tuple[str, ...]:
    """A push's commits, head first; a PR merged by this push is found through them."""
    if event != "push":
        return ()
    return tuple(shas) or ((sha,) if sha else ())
