"""The few GitHub REST calls memory-agent makes, through PyGithub.

``GitHubClient`` reads a pull request (``PullRequestReader``) and keeps one sticky comment per
agent (``PullRequestCommenter``). Every PyGithub error becomes one line (``api.RepositoryApi``):
a ``GitHubError`` with the HTTP status and GitHub's message (never the token), or a
``CommentPermissionError`` when a comment may not be written (a fork pull request's read-only
token).

Which comment is ours: one that contains the agent's marker and was created by the identity of
the token the client uses (``identity``), never another bot's that echoes pull request text. The
workflow's ``GITHUB_TOKEN`` and a GitHub App's installation token get 403 from ``GET /user``, but
GraphQL ``viewer`` answers for every kind of token: ``github-actions[bot]``, ``<app>[bot]``, or a
person's login for a personal access token. When GitHub does not answer, the identity is
``github-actions[bot]``, the workflow token's, the usual case: with another token no comment is
then found, a new one is created and nothing foreign is trusted. ``bot_login`` sets it instead.

After a merge, the push run asks which pull requests were merged and whether their sticky comment
may be trusted: those methods delegate to ``promotion``. Pull request reviews with inline
comments, the feedback on them and comparing two commits delegate to ``reviews``. Both, and
``base_files``, take the client's ``RepositoryApi``, never the client.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property

from github import GithubException
from github.ContentFile import ContentFile
from github.IssueComment import IssueComment
from github.NamedUser import NamedUser
from github.Organization import Organization
from github.PullRequest import PullRequest
from github.Repository import Repository
from pydantic import BaseModel, ValidationError

from memory_action.errors import GitHubError
from memory_action.github import after_merge, base_files, reviews
from memory_action.github.after_merge import (
    ACTIONS_BOT,
    MergedPullRequest,
    StickyComment,
    TrustedComment,
    WorkflowRun,
)
from memory_action.github.api import RepositoryApi, changed_file
from memory_action.github.pull_request import (
    MAX_FILE_BYTES,
    ChangedFile,
    PostedComment,
    PullRequestInfo,
    ReactionContent,
    decode_text,
)
from memory_action.github.reviews import CommentFeedback, Comparison, InlineComment, PostedReview
from memory_action.memory.duplicates import fold_duplicates
from memory_action.safety.outgoing import SafeText

_VIEWER = "query { viewer { __typename login } }"


class GitHubClient:
    """GitHub for one repository: pull requests to read, sticky comments to write.

    Nothing is sent until the first call. ``retries`` applies to reads only (and to connection
    failures): a retried POST could post the comment twice.
    """

    def __init__(
        self,
        token: str,
        api_url: str,
        repo: str,
        *,
        retries: int = 2,
        timeout_seconds: int = 30,
        bot_login: str | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
        warn: Callable[[str], None] = lambda _line: None,
    ) -> None:
        """``warn`` hears, in one line, of each look-up that decides trust and failed."""
        self._api = RepositoryApi(
            token,
            api_url,
            repo,
            retries=retries,
            timeout_seconds=timeout_seconds,
            after_write=self._forget_comments,
        )
        self._bot_login = bot_login
        self._warn = warn
        self.max_file_bytes = max_file_bytes
        self._write_access: dict[str, tuple[bool, str]] = {}  # login → answer, once per run
        self._runs: dict[int, WorkflowRun] = {}
        # Read once per run (a client lives for one run): each pull request's reader, which
        # keeps what it read, and each issue's comments until our next write.
        self._readers: dict[int, GitHubPullRequest] = {}
        self._issue_comments: dict[int, list[IssueComment]] = {}

    @property
    def repo_name(self) -> str:
        """owner/name"""
        return self._api.repo_name

    @property
    def repository(self) -> Repository:
        """The PyGithub repository, built on first use (building it sends nothing)."""
        return self._api.repository

    def _forget_comments(self) -> None:
        """After a write, the comments read so far are read again when next asked for."""
        self._issue_comments.clear()

    def pull_request(self, number: int) -> GitHubPullRequest:
        """The pull request's reader, the same one for every caller of this run."""
        if number not in self._readers:
            self._readers[number] = GitHubPullRequest(self._api, number, self.max_file_bytes)
        return self._readers[number]

    def default_branch(self) -> str:
        with self.api(f"reading repository {self.repo_name}"):
            return self.repository.default_branch

    # --- PullRequestCommenter -------------------------------------------------------------------

    def find_sticky_comment(self, pr_number: int, marker: str) -> str | None:
        """The sticky comment's body, with the ticks of any duplicate folded in
        (``memory.duplicates``)."""
        comments = self._our_comments(pr_number, marker)
        if not comments:
            return None
        oldest, *newer = comments
        return fold_duplicates(oldest.body, [comment.body for comment in newer], marker)

    def upsert_sticky_comment(self, pr_number: int, marker: str, body: SafeText) -> PostedComment:
        """Edit the oldest comment of ours (or create one); duplicates are folded in, deleted.
        Only a ``SafeText`` is posted: every text passes the outgoing gate first."""
        text = body.text
        if marker not in text:
            raise ValueError("the comment body must contain the marker, or no run can find it")
        # A token that may not even list the comments may not write one either.
        comments = self._our_comments(pr_number, marker, write=True)
        if not comments:
            with self.api(f"creating a comment on #{pr_number}", write=True):
                created = self.repository.get_issue(pr_number).create_comment(text)
                return PostedComment(url=created.html_url, created=True)
        oldest, *newer = comments
        # Only the ticks of our own duplicates are folded into the gated text.
        text = fold_duplicates(text, [comment.body for comment in newer], marker)
        if oldest.body != text:  # an unchanged review is not edited again
            with self.api(f"updating comment {oldest.id} on #{pr_number}", write=True):
                oldest.edit(text)
        for duplicate in newer:
            self._delete_duplicate(pr_number, duplicate)
        return PostedComment(url=oldest.html_url, created=False)

    def _delete_duplicate(self, pr_number: int, comment: IssueComment) -> None:
        """Delete a newer comment of ours; one another run deleted first is no error."""
        with self.api(f"deleting duplicate comment {comment.id} on #{pr_number}", write=True):
            try:
                comment.delete()
            except GithubException as exc:
                if exc.status != 404:  # 404: another run converged first
                    raise

    def oldest_comment(self, pr_number: int, marker: str) -> IssueComment | None:
        """The oldest comment of ours that holds ``marker`` (the sticky comment)."""
        comments = self._our_comments(pr_number, marker)
        return comments[0] if comments else None

    def _our_comments(
        self, pr_number: int, marker: str, *, write: bool = False
    ) -> list[IssueComment]:
        """Our comments that hold ``marker``, oldest first (issue comments, every page, listed
        once until this client writes)."""
        with self.api(f"listing comments of #{pr_number}", write=write):
            if pr_number not in self._issue_comments:
                listed = list(self.repository.get_issue(pr_number).get_comments())
                self._issue_comments[pr_number] = listed
            return [
                comment
                for comment in self._issue_comments[pr_number]
                if marker in (comment.body or "") and self._is_ours(comment.user)
            ]

    def _is_ours(self, author: NamedUser | Organization | None) -> bool:
        return author is not None and author.login == self.identity  # None: a deleted account

    @cached_property
    def identity(self) -> str:
        """The login the token writes comments as (see the module docstring), asked once."""
        if self._bot_login is not None:
            return self._bot_login
        requester = self.repository.requester
        try:
            with self.api("asking GitHub who the token is"):
                _, answer = requester.requestJsonAndCheck(
                    "POST", requester.graphql_url, input={"query": _VIEWER}
                )
            viewer = answer["data"]["viewer"]
            login, kind = str(viewer["login"]), viewer.get("__typename")
        except (GitHubError, KeyError, TypeError, AttributeError):
            return ACTIONS_BOT
        # GraphQL may name a bot without the "[bot]" the REST API shows on its comments.
        return f"{login}[bot]" if kind == "Bot" and not login.endswith("[bot]") else login

    # --- after a merge: which memory changes to apply (after_merge.py) ----------------------------

    def merged_pull_requests(
        self, commit_shas: Sequence[str], base_branch: str
    ) -> list[MergedPullRequest]:
        """The pull requests of the pushed commits merged into ``base_branch``, oldest first."""
        return after_merge.merged_pull_requests(self._api, commit_shas, base_branch)

    def sticky_comment(self, pr_number: int, marker: str) -> StickyComment | None:
        """The comment ``find_sticky_comment`` finds, with what the trust checks need."""
        return after_merge.sticky_comment(
            self._api, pr_number, self.oldest_comment(pr_number, marker)
        )

    def comment_editors(self, comment: StickyComment) -> list[str] | None:
        """Who edited the comment; None when GitHub cannot tell (then it is not trusted)."""
        return after_merge.comment_editors(self._api, comment)

    def write_access(self, login: str) -> tuple[bool, str]:
        """Whether ``login`` may write to the repository (admin, maintain or write) and how
        GitHub answered; False when it does not say. Asked once per person per client."""
        if login not in self._write_access:
            access = after_merge.ask_write_access(self._api, login)
            if access.problem:
                self._warn(
                    f"{login} is treated as without write access: GitHub did not tell their "
                    f"repository permission ({access.problem})."
                )
            self._write_access[login] = access.allowed, access.reason
        return self._write_access[login]

    def has_write_access(self, login: str) -> bool:
        """``TrustLookup``: whether ``login`` may write to the repository."""
        return self.write_access(login)[0]

    def workflow_run(self, run_id: int) -> WorkflowRun:
        """A run of this repository (``GitHubError`` when GitHub does not say), asked once."""
        if run_id not in self._runs:
            self._runs[run_id] = after_merge.workflow_run(self._api, run_id)
        return self._runs[run_id]

    def look_up_workflow_runs(self, run_ids: Sequence[int], workflow_path: str) -> None:
        """Ask about several runs at once: when two or more of ``run_ids`` are not known yet,
        one page of ``workflow_path``'s newest runs answers ``workflow_run`` for those it holds
        (a call each otherwise); a run it does not hold, or a failed listing, is asked alone."""
        unknown = {run_id for run_id in run_ids if run_id not in self._runs}
        if len(unknown) < 2:  # one run: its own call costs no more
            return
        try:
            listed = after_merge.recent_workflow_runs(self._api, workflow_path)
        except GitHubError:
            return
        self._runs.update({run.id: run for run in listed if run.id in unknown})

    def head_repository(self, pr_number: int) -> str | None:
        """``TrustLookup``: the pull request's head repository ("" for a deleted fork); None
        when GitHub does not say."""
        try:
            with self.api(f"reading pull request #{pr_number}"):
                head = self.pull_request(pr_number).pull.head.repo
                return head.full_name if head is not None else ""
        except GitHubError:
            return None

    def trusted_comment(self, pr_number: int, marker: str) -> TrustedComment:
        """The sticky comment if only our bot and people with write access edited it, and why."""
        return after_merge.trusted_comment(self._api, self, pr_number, marker)

    # --- pull request reviews (reviews.py) ------------------------------------------------------

    def post_review(
        self,
        pr_number: int,
        commit_id: str,
        body: SafeText,
        comments: Sequence[InlineComment],
        *,
        pause: Callable[[float], None] = time.sleep,
    ) -> PostedReview:
        """Post the inline comments as ``COMMENT`` reviews on ``commit_id``, in batches."""
        return reviews.post_review(self._api, pr_number, commit_id, body, comments, pause=pause)

    def wrote_review_comment(self, pr_number: int, comment_id: int) -> bool:
        """Whether the review comment ``comment_id`` of the pull request was written by this
        token's identity (a reply to anyone else's comment is not the agent's business)."""
        try:
            with self.api(f"reading review comment {comment_id} of #{pr_number}"):
                comment = self.repository.get_pull(pr_number).get_review_comment(comment_id)
                return self._is_ours(comment.user)
        except GitHubError:
            return False

    def review_feedback(self, pr_number: int) -> list[CommentFeedback]:
        """Our inline comments with their reactions, replies and thread states."""
        return reviews.review_feedback(self._api, pr_number, lambda: self.identity)

    def compare(self, base: str, head: str) -> Comparison | None:
        """How ``head`` relates to ``base``; None when GitHub does not know one of them."""
        return reviews.compare(self._api, base, head)

    # --- comment commands -----------------------------------------------------------------------

    def react(
        self, comment_id: int, content: ReactionContent, *, review_comment: bool = False
    ) -> None:
        """React (``eyes``, ``+1``) to an issue comment, or to a pull request review comment."""
        kind = "pulls" if review_comment else "issues"
        url = f"{self.repository.url}/{kind}/comments/{comment_id}/reactions"
        with self.api(f"reacting to comment {comment_id}", write=True):
            self.repository.requester.requestJsonAndCheck("POST", url, input={"content": content})

    def reply(self, number: int, body: SafeText, *, in_thread_of: int | None = None) -> str:
        """Post ``body`` on issue or pull request ``number`` (in the review thread of comment
        ``in_thread_of``, if given); the new comment's URL."""
        with self.api(f"replying on #{number}", write=True):
            if in_thread_of is not None:
                pull = self.repository.get_pull(number)
                return pull.create_review_comment_reply(in_thread_of, body.text).html_url
            return self.repository.get_issue(number).create_comment(body.text).html_url

    # --- errors ---------------------------------------------------------------------------------

    @contextmanager
    def api(self, action: str, *, write: bool = False) -> Iterator[None]:
        """Turn PyGithub and transport errors raised inside into our one-line errors. After a
        write, the comments read so far are read again when next asked for."""
        with self._api.api(action, write=write):
            yield

    def one_line(self, text: str) -> str:
        """``text`` on one line, without the token."""
        return self._api.one_line(text)


class GitHubPullRequest:
    """``PullRequestReader`` for one pull request, through a ``GitHubClient``'s API; files over
    ``max_file_bytes`` are not read."""

    def __init__(self, github: RepositoryApi, number: int, max_file_bytes: int) -> None:
        self._github = github
        self._number = number
        self._max_file_bytes = max_file_bytes
        self._info: PullRequestInfo | None = None
        self._files: list[ChangedFile] | None = None
        self._contents: dict[tuple[str, str], bytes | None] = {}  # (path, ref) → bytes

    @cached_property
    def pull(self) -> PullRequest:
        """The PyGithub pull request, fetched once, when first read."""
        return self._github.repository.get_pull(self._number)

    def known_from_event(self, info: PullRequestInfo) -> None:
        """What the event's payload says of the pull request: ``info`` is then not asked for
        (the payload is the pull request as the event saw it, which the run reviews)."""
        if info.number == self._number and self._info is None:
            self._info = info

    def info(self) -> PullRequestInfo:
        if self._info is None:
            with self._github.api(f"reading pull request #{self._number}"):
                self._info = _pull_request_info(self.pull)
        return self._info

    def changed_files(self) -> list[ChangedFile]:
        """Every changed file (GitHub lists at most 3,000), every page, listed once."""
        if self._files is None:
            with self._github.api(f"listing the files of #{self._number}"):
                self._files = [changed_file(f) for f in self.pull.get_files()]
        return list(self._files)

    def file_content(self, path: str) -> str | None:
        """The file's text at the head commit.

        None when it does not exist there, is not a regular file (a directory, symlink or
        submodule), is binary, or is larger than the client's ``max_file_bytes``.
        """
        head_sha = self.info().head_sha
        with self._github.api(f"reading {path} at {head_sha[:7]}"):
            data = self._file_bytes(path, head_sha)
        return decode_text(data) if data is not None else None

    def base_file_content(self, path: str) -> str | None:
        """The file's text at the base commit, with the same limits as ``file_content``."""
        base = self.info().base_sha or self.info().base_ref
        with self._github.api(f"reading {path} at {base[:12]}"):
            data = self._file_bytes(path, base)
        return decode_text(data) if data is not None else None

    def prefetch_base_files(self, paths: Sequence[str]) -> None:
        """Read these files at the base commit in one GraphQL request, before they are asked
        for one by one (a REST call each); what GraphQL cannot tell is read over REST then."""
        base = self.info().base_sha or self.info().base_ref
        wanted = [path for path in dict.fromkeys(paths) if (path, base) not in self._contents]
        github = self._github
        found = base_files.read_files(github, github.repo_name, base, wanted, self._max_file_bytes)
        self._contents.update({(path, base): data for path, data in found.items()})

    def _file_bytes(self, path: str, ref: str) -> bytes | None:
        """The file at a commit, read once (a commit does not change)."""
        if (path, ref) not in self._contents:
            self._contents[(path, ref)] = self._read_bytes(path, ref)
        return self._contents[(path, ref)]

    def _read_bytes(self, path: str, ref: str) -> bytes | None:
        try:
            found = self._github.repository.get_contents(path, ref=ref)
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        if isinstance(found, list) or found.type != "file":
            return None
        if found.size > self._max_file_bytes:
            return None
        return _content_bytes(self._github.repository, found)


class _PullUser(BaseModel):
    login: str


class _PullBranch(BaseModel):
    ref: str
    sha: str


class _PullJson(BaseModel):
    """A pull request as GitHub's JSON has it (the API's answer, a webhook payload's
    ``pull_request``), as far as ``info`` needs it."""

    number: int
    title: str
    body: str | None = None
    user: _PullUser | None = None
    html_url: str
    head: _PullBranch
    base: _PullBranch
    draft: bool | None = False


def pull_request_from_event(payload: Mapping[str, object]) -> PullRequestInfo | None:
    """The pull request of a ``pull_request`` event's payload; None when it lacks a field
    ``info`` needs (then the API is asked)."""
    return _info_from_json(payload.get("pull_request"))


def _info_from_json(value: object) -> PullRequestInfo | None:
    """A pull request as GitHub's JSON has it (an API answer, an event's payload)."""
    try:
        pull = _PullJson.model_validate(value)
    except ValidationError:
        return None
    return PullRequestInfo(
        number=pull.number,
        title=pull.title,
        body=pull.body or "",
        author=pull.user.login if pull.user is not None else "ghost",
        html_url=pull.html_url,
        head_sha=pull.head.sha,
        head_ref=pull.head.ref,
        base_ref=pull.base.ref,
        draft=bool(pull.draft),
        base_sha=pull.base.sha,
    )


def _pull_request_info(pull: PullRequest) -> PullRequestInfo:
    info = _info_from_json(pull.raw_data)
    if info is None:
        raise GitHubError(f"GitHub's answer about pull request #{pull.number} is malformed")
    return info


def _content_bytes(repo: Repository, found: ContentFile) -> bytes:
    """The file's bytes; over 1 MB the contents API sends none, so they come from the blob."""
    if found.encoding == "base64":
        return found.decoded_content
    blob = repo.get_git_blob(found.sha)
    if blob.encoding == "base64":
        return base64.b64decode(blob.content)
    return blob.content.encode("utf-8")
