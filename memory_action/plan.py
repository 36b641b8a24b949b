"""What one run is: the types the pipeline's steps share.

``Services`` carries every real client (built by ``main()``), ``Plan`` what the run decided
before restoring anything. What happened is ``outcome``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from memory_action.agent.progress import ProgressHook
from memory_action.errors import InputError, MemoryFileError, Naming, input_words
from memory_action.gha import Workflow
from memory_action.github.pull_request import (
    PullRequestCommenter,
    PullRequestReader,
    ReactionContent,
)
from memory_action.memory.sources import MemoryFiles, find_symlink
from memory_action.memory.state import Layer
from memory_action.run.context import RunContext
from memory_action.run.deadline import Deadline
from memory_action.run.scope import MemoryScope
from memory_action.run.settings import Mode, Settings
from memory_action.safety.outgoing import SafeText
from memory_action.safety.scrub import RefusalLog
from memory_action.store.base import LayerAdmin, MemoryStore

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_action.github.after_merge import (
        MergedPullRequest,
        StickyComment,
        TrustedComment,
        WorkflowRun,
    )


class GitHubAccess(PullRequestCommenter, Protocol):
    """What a run needs from GitHub: read a pull request, the sticky comment, promotion."""

    def pull_request(self, number: int) -> PullRequestReader: ...

    def sticky_comment(self, pr_number: int, marker: str) -> StickyComment | None: ...

    def merged_pull_requests(
        self, commit_shas: list[str], base_branch: str
    ) -> list[MergedPullRequest]: ...

    def trusted_comment(self, pr_number: int, marker: str) -> TrustedComment: ...

    def workflow_run(self, run_id: int) -> WorkflowRun: ...

    def look_up_workflow_runs(self, run_ids: Sequence[int], workflow_path: str) -> None: ...

    # Comment commands (``commands.route``): who may change memory, and the answer.
    def has_write_access(self, login: str) -> bool: ...

    def head_repository(self, pr_number: int) -> str | None: ...

    def react(
        self, comment_id: int, content: ReactionContent, *, review_comment: bool = False
    ) -> None: ...

    def reply(self, number: int, body: SafeText, *, in_thread_of: int | None = None) -> str: ...


@dataclass(frozen=True, kw_only=True)
class Services:
    workflow: Workflow
    store: MemoryStore | None  # None: no store this run (see store_note)
    store_note: str
    github: GitHubAccess | None  # None: no GitHub access
    model_factory: Callable[[], BaseChatModel]
    # The change to review when it is not a GitHub pull request (a local checkout's diff).
    pull_request_reader: PullRequestReader | None = None
    store_write_note: str = ""  # why the store will not take saves (e.g. ACTIONS_CACHE_MODE)
    layer_admin: Callable[[str], LayerAdmin] | None = None  # lists and prunes a ref's entries
    clock: Callable[[], float] = time.time
    timer: Callable[[], float] = time.monotonic  # what ``timeout_minutes`` is measured on
    sleep: Callable[[float], None] = time.sleep  # waits out a provider's short rate limit
    lossless: bool = True  # False only to measure what newest-entry-wins loses
    sources_from_base: bool = True  # a PR run reads memory_sources at the base commit
    progress: ProgressHook | None = None  # hears of each model request (``progress_line``)
    naming: Naming = input_words  # how the log names a setting: an input, or the CLI's flag


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What this run is: decided before anything is restored."""

    settings: Settings
    context: RunContext
    services: Services
    mode: Mode
    scope: MemoryScope
    files: MemoryFiles
    scratch: Path  # an empty folder for this run's restores that are only read
    refusals: RefusalLog = field(default_factory=RefusalLog)
    changed_sources: tuple[str, ...] = ()  # read-only sources the pull request changes
    deadline: Deadline = field(default_factory=Deadline.none)  # timeout_minutes from the start

    @property
    def folder(self) -> Path:
        """The memory folder, which the run clears and writes: every use checks the folders on
        its way in the checkout (a pull request can commit ``cfg -> /elsewhere``). The folder
        itself may be a link only until ``restore.clear_folder`` removes it."""
        relative = self.settings.memory_path
        unsafe = _unsafe_parent(self.files.workspace, relative)
        if unsafe:
            raise MemoryFileError(
                f"memory_path {relative.as_posix()} cannot be used: {unsafe} in the checkout, "
                "and memory is cleared and written only in plain folders; choose another "
                "memory_path or change that path in the repository."
            )
        return self.files.host_path(relative)

    @property
    def log(self) -> Workflow:
        return self.services.workflow

    @property
    def masked(self) -> frozenset[str]:
        return self.log.masked_values


def _unsafe_parent(workspace: Path, relative: PurePosixPath) -> str:
    """Why the folders above ``relative`` could send a write elsewhere ("" when they cannot):
    one is a symlink, or a file stands where a folder would be made."""
    link = find_symlink(workspace, relative.parent)
    if link is not None:
        return f"{link.as_posix()} is a symlink"
    for depth in range(1, len(relative.parts)):
        above = PurePosixPath(*relative.parts[:depth])
        host = workspace.joinpath(*above.parts)
        if host.exists() and not host.is_dir():
            return f"{above.as_posix()} is not a folder"
    return ""


def resolve_mode(settings: Settings, context: RunContext) -> Mode:
    """``auto`` reviews pull requests and maintains memory on branch events."""
    if settings.mode is Mode.AUTO:
        return Mode.REVIEW if context.pull_request is not None else Mode.MAINTENANCE
    if settings.mode is Mode.REVIEW and context.pull_request is None:
        raise InputError(
            f"Input 'mode' is review, but the event {context.event_name} has no pull request; "
            "use mode auto or maintenance."
        )
    return settings.mode


def saves_committed(the_plan: Plan) -> bool:
    return the_plan.scope.may_write and the_plan.scope.layer is Layer.COMMITTED
