"""One episode's world: the GitHub fake served on 127.0.0.1, a generated git repository in the
workspace, a local-directory memory store, and the real action run in-process on each event.

Every step goes through ``memory_action.main.main`` with the environment the Actions runner
gives (``runner_env``); people's reactions and replies are added to the fake's review state as
they would appear on GitHub, by logins whose permission the fake answers.

    with World(root=root) as world:
        world.seed({"src/app.py": "..."})
        world.open_pull(1, {"src/app.py": "..."}, model)
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from langchain_core.language_models import BaseChatModel

from memory_action.errors import MemoryActionError
from memory_action.evaluation import events
from memory_action.evaluation.fixture_repo import FixtureRepo
from memory_action.evaluation.github.api import (
    REPOSITORY,
    WORKFLOW_REF,
    FakeGitHub,
    FakePullRequest,
)
from memory_action.evaluation.github.http import GitHubHttpServer
from memory_action.evaluation.github.reviews import Comparison
from memory_action.evaluation.reviewer import GullibleReviewer, Planted
from memory_action.evaluation.runner_env import Repository, RunFiles, parse_outputs, runner_env
from memory_action.main import main
from memory_action.run.scope import repo_committed_prefix
from memory_action.store.local import LocalDirectoryStore

WRITER = "maintainer"  # has write access
NON_WRITER = "drive-by"  # may read, react and reply, as anyone on a public repository
FORKER = "forker"  # opens pull requests from a fork of the repository; may read
FORK = "forker/app"
TOKEN = "ghs_" + "EvalW0rld" * 4  # the fake accepts any token
MAIN = "refs/heads/main"
MEMORY_FILE = "AGENTS.md"  # the writable memory file, in a store entry


class EpisodeError(MemoryActionError):
    """A step of an episode did not run: the harness is broken, not a figure."""


@dataclass(frozen=True, kw_only=True)
class Arm:
    """The action's setup in an episode: the product's own (the defaults), or a baseline,
    emulated from outside the action (its inputs, what GitHub answers, what people do, what
    the reviewer reads), never by changing the pipeline."""

    name: str
    inputs: Mapping[str, str] = field(default_factory=dict)  # action inputs of every run
    everyone_writes: bool = False  # GitHub answers every login as having write access
    tick_everything: bool = False  # a writer ticks every proposal's box before each merge
    whole_file: bool = False  # the reviewer reads the stored AGENTS.md, not its memory block


PRODUCT = Arm(name="the product")
_BOX = re.compile(r"^(\s*[-*] )\[ \]( <!-- memory-agent:item )", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class RunOutcome:
    exit_code: int
    log: str
    outputs: dict[str, str]
    summary: str


@dataclass(kw_only=True)
class World:
    root: Path
    arm: Arm = PRODUCT
    fake: FakeGitHub = field(init=False)
    repo: FixtureRepo = field(init=False)
    runs: list[RunOutcome] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)  # rate-limit waits, recorded, never slept
    _server: GitHubHttpServer = field(init=False)
    _run_id: int = 1000

    def __post_init__(self) -> None:
        others = "write" if self.arm.everyone_writes else "read"
        self.fake = FakeGitHub(permissions={WRITER: "write", NON_WRITER: others, FORKER: others})
        self.repo = FixtureRepo(self.root / "workspace", home=self.root / "home")
        self._server = GitHubHttpServer(self.fake)

    def __enter__(self) -> Self:
        self._server.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.__exit__(*exc_info)

    @property
    def store_dir(self) -> Path:
        return self.root / "store"

    def reviewer(self, planted: Sequence[Planted] = ()) -> GullibleReviewer:
        """The gullible reviewer for a run of this world; in the whole-file arm it reads the
        committed AGENTS.md from the store as plain text instead of its memory block."""
        whole = self.committed_memory if self.arm.whole_file else None
        return GullibleReviewer(planted=list(planted), memory_file=whole)

    # -- the repository and its pull requests ----------------------------------------------------

    def seed(self, files: Mapping[str, str]) -> str:
        return self.repo.init(files)

    def open_pull(
        self,
        number: int,
        changes: Mapping[str, str | None],
        model: BaseChatModel,
        *,
        title: str | None = None,
        body: str | None = None,
        fork: bool = False,
    ) -> RunOutcome:
        """A branch off main with ``changes``, opened as pull request ``number`` and reviewed;
        ``fork``: opened by ``FORKER`` from the fork ``FORK``."""
        branch = f"pr-{number}"
        base = self.repo.start_branch(branch)
        head = self.repo.commit(changes, f"Pull request {number}")
        pull = FakePullRequest(
            number=number,
            title=title if title is not None else f"Change {number}",
            body=body if body is not None else f"The change of pull request {number}.",
            head_ref=branch,
            head_sha=head,
            base_sha=base,
        )
        if fork:
            pull.author, pull.head_repo = FORKER, FORK
        self.fake.add_pull(pull)
        self._refresh(pull)
        return self._pull_run(pull, "opened", model)

    def push_to_pull(
        self, number: int, changes: Mapping[str, str | None], model: BaseChatModel
    ) -> RunOutcome:
        """A new commit on the pull request's branch (``synchronize``)."""
        pull = self.fake.pulls[number]
        self.repo.checkout(pull.head_ref)
        old = pull.head_sha
        pull.head_sha = self.repo.commit(changes, f"More of pull request {number}")
        self.fake.reviews.compare_as(
            old,
            pull.head_sha,
            Comparison(status="ahead", files=self.repo.changed(old, pull.head_sha)),
        )
        self._refresh(pull)
        return self._pull_run(pull, "synchronize", model)

    def merge(self, number: int, model: BaseChatModel) -> RunOutcome:
        """Merge the pull request into main; the push to main runs (promotion, maintenance)."""
        pull = self.fake.pulls[number]
        if self.arm.tick_everything:
            self._tick_everything(number)
        sha = self.repo.merge(pull.head_ref, f"Merge pull request #{number}")
        self.fake.merge(number, sha)
        return self.run("push", events.push_event(sha), MAIN, sha, model)

    def maintain(self, model: BaseChatModel) -> RunOutcome:
        """A scheduled run on main."""
        self.repo.checkout("main")
        return self.run("schedule", events.schedule_event(), MAIN, self.repo.head(), model)

    # -- what people do on the bot's inline comments ---------------------------------------------

    def inline_comment(self, number: int, path: str, title: str) -> int:
        """The id of the bot's inline comment on ``path`` whose text names ``title``."""
        for comment in self.fake.reviews.posted(number):
            if comment["path"] == path and title in comment["body"]:
                return int(comment["id"])
        raise EpisodeError(f"no inline comment {title!r} on {path} in pull request {number}")

    def comment(self, number: int, login: str, body: str, model: BaseChatModel) -> RunOutcome:
        """``login`` comments on pull request ``number``; the ``issue_comment`` event runs the
        action on main, as GitHub runs it."""
        posted = self.fake.add_comment(number, body, login)
        event = events.issue_comment_event(
            self.fake.pulls[number],
            comment_id=int(posted["id"]),
            login=login,
            body=body,
            association=self._association(login),
        )
        self.repo.checkout("main")
        return self.run("issue_comment", event, MAIN, self.repo.head(), model)

    def plant(self, key: str, files: Mapping[str, str]) -> None:
        """An entry under ``key`` in the store, holding ``files`` (memory-folder-relative), put
        there by someone other than the action."""
        folder = self.root / "planted" / str(len(list(self.root.glob("planted/*"))))
        for relative, text in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text)
        saved = LocalDirectoryStore(self.store_dir).save(key, folder)
        if not saved.saved:
            raise EpisodeError(f"could not plant {key}: {saved}")

    def committed_memory(self, agent: str = "memory-agent") -> str:
        """The writable memory file of the newest committed entry in the store, as stored (""
        before there is one)."""
        store = LocalDirectoryStore(self.store_dir)
        found = store.entries(repo_committed_prefix(agent))
        if not found:
            return ""
        _, newest = max(enumerate(found), key=lambda pair: (pair[1].created, pair[0]))
        return store.read_entry(newest.key).get(MEMORY_FILE, "")

    def react(self, comment_id: int, login: str, content: str) -> None:
        self.fake.reviews.react(comment_id, login, content)

    def untick(self, number: int, text: str, login: str = WRITER) -> None:
        """``login`` unticks, in the sticky comment of pull request ``number``, the proposal's
        checklist line that shows ``text`` (a veto), as a writer does on GitHub."""
        sticky = self.fake.comments[number][0]  # the bot's, posted by the pull request's review
        lines = str(sticky["body"]).split("\n")
        ticked = [n for n, line in enumerate(lines) if line.startswith("- [x]") and text in line]
        if not ticked:
            raise EpisodeError(f"no ticked checklist line shows {text!r} in pull request {number}")
        for n in ticked:
            lines[n] = "- [ ]" + lines[n][len("- [x]") :]
        self.fake.edit_comment_as(number, login, "\n".join(lines))

    def reply(
        self, number: int, to: int, login: str, body: str, model: BaseChatModel
    ) -> RunOutcome:
        """``login`` replies to the bot's comment ``to``; the reply's event runs the action."""
        association = self._association(login)
        reply_id = self.fake.reviews.reply(number, to, login, body, association)
        pull = self.fake.pulls[number]
        event = events.review_reply_event(
            pull, to=to, reply_id=reply_id, login=login, body=body, association=association
        )
        self.repo.checkout(pull.head_sha)
        return self.run(
            "pull_request_review_comment", event, f"refs/pull/{number}/merge", pull.head_sha, model
        )

    # -- running the action ----------------------------------------------------------------------

    def run(
        self, event_name: str, event: dict[str, Any], ref: str, sha: str, model: BaseChatModel
    ) -> RunOutcome:
        self._run_id += 1
        self.fake.workflow_runs.append(self._run_id)
        files = RunFiles(folder=self.root / "runs" / str(self._run_id))
        env = runner_env(
            files=files,
            repository=Repository(
                full_name=REPOSITORY, api_url=self._server.base_url, workflow_ref=WORKFLOW_REF
            ),
            event_name=event_name,
            event=event,
            ref=ref,
            sha=sha,
            run_id=self._run_id,
            inputs={"github_token": TOKEN, **self.arm.inputs},
            workspace=self.repo.root,
            store_dir=self.store_dir,
        )
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(out):
            code = main(
                env, build_model=lambda: model, sleep=self.waits.append, timer=time.monotonic
            )
        outcome = RunOutcome(
            exit_code=code,
            log=out.getvalue(),
            outputs=parse_outputs(files.output.read_text()),
            summary=files.summary.read_text(),
        )
        self.runs.append(outcome)
        if code != 0:
            tail = "\n".join(outcome.log.splitlines()[-15:])
            raise EpisodeError(f"the {event_name} run {self._run_id} exited {code}:\n{tail}")
        return outcome

    def _association(self, login: str) -> str:
        return "MEMBER" if self.fake.permissions.get(login) == "write" else "NONE"

    def _tick_everything(self, number: int) -> None:
        """A writer ticks every unticked proposal item of the sticky comment."""
        if not self.fake.comments.get(number):
            return
        body = self.fake.comments[number][0]["body"]
        ticked = _BOX.sub(r"\1[x]\2", body)
        if ticked != body:
            self.fake.edit_comment_as(number, WRITER, ticked)

    def _refresh(self, pull: FakePullRequest) -> None:
        """What the fake answers about ``pull``, read from git."""
        pull.files = self.repo.changed(pull.base_sha, pull.head_sha)
        pull.contents = self.repo.tree(pull.head_sha)
        pull.base_contents = self.repo.tree(pull.base_sha)

    def _pull_run(self, pull: FakePullRequest, action: str, model: BaseChatModel) -> RunOutcome:
        self.repo.checkout(pull.head_sha)
        event = events.pull_request_event(
            pull, action=action, association=self._association(pull.author)
        )
        return self.run(
            "pull_request", event, f"refs/pull/{pull.number}/merge", pull.head_sha, model
        )
