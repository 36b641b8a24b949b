"""The review engine: one pull request → one review that fits the model.

The diff reaches the model in the first request of each batch, not through one tool call per
file. Files are chosen and ordered by review value (``selection``), compressed and packed into
batches that each fit the model's input limit (``batches``). Each batch's request is answered as
data (``answer``: a summary, findings on lines of the diff, the earlier findings it fixes); the
batches' findings are merged without repeats (``ledger.merge_findings``) and, with more than one
batch, a last request writes only the summary. Every batch has the same memory and the same
tools (reading a file or another file's patch, editing memory), bounded by the ``RequestBudget``.
Whatever is not reviewed is listed with its reason, never dropped silently.

Provider limits: a request the provider refuses as too large makes the engine shrink its batches
once (the estimator learns the request was bigger than it thought) and retry; a second refusal
leaves that batch's files unreviewed. The day's quota ends the review at once (``quota``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from memory_action.agent.runner import AgentRunError, run_agent
from memory_action.errors import AgentError, Setting
from memory_action.memory.middleware import MemoryMiddleware
from memory_action.pull_request import ChangedFile, PullRequestReader
from memory_action.review import answer as answers
from memory_action.review.answer import BatchAnswer
from memory_action.review.batches import Batch, ReviewPlan, plan_batches
from memory_action.review.budget import (
    Cost,
    LastCallAnswers,
    RequestBudget,
    answer_tools,
    tool_schema,
)
from memory_action.review.findings import Finding
from memory_action.review.ledger import merge_findings
from memory_action.review.limits import DailyQuotaError, ProviderLimits, RequestTooLargeError
from memory_action.review.messages import (
    BatchView,
    batch_message,
    description_chars,
    header,
    synthesis_message,
)
from memory_action.review.profile import ModelProfile
from memory_action.review.progress import (
    ANSWERED,
    SENT,
    ProgressHook,
    RequestProgress,
    Stage,
)
from memory_action.review.selection import ReviewFile, Skipped, select_files
from memory_action.review.tokens import TokenEstimator

REVIEWED, PARTIAL, QUOTA, SKIPPED = "reviewed", "partial", "quota", "skipped"
TOOL_ROOM = 0.03  # of the input limit, kept free in a batch for tool results and the reply turn
MIN_TOOL_ROOM = 240
RECALIBRATED = 0.03  # a change of the token estimate worth packing what is left again
EXTRA_CALLS = 2  # tool rounds a batch (or the last request) may take when calls are left
GITATTRIBUTES = ".gitattributes"
UNCHANGED = "unchanged since the last review"


@dataclass(frozen=True)
class ReviewSetup:
    """What the engine needs besides the pull request: the model's limits and the run's."""

    profile: ModelProfile
    max_model_calls: int
    exclude: tuple[str, ...]
    timeout_s: float
    repository: str
    system_prompt: str
    memory_budget_bytes: int
    memory: bool  # memory is enabled: the messages ask for durable lessons
    provider: str = ""


@dataclass(frozen=True)
class ReviewResult:
    answer: str  # the review, or "" when none was written (quota before any finding)
    outcome: str  # reviewed | partial | quota | skipped
    finished: bool  # the run ended as planned (memory may be saved)
    cost: Cost
    reviewed: tuple[str, ...]
    not_reviewed: tuple[Skipped, ...]  # skipped by choice and left out by limits, with reasons
    note: str = ""  # one line for people: the quota, a limit that cut the review
    findings: tuple[Finding, ...] = ()  # merged across batches, most severe first
    fixed: tuple[str, ...] = ()  # ids of earlier findings the model says are fixed
    dropped: tuple[str, ...] = ()  # findings of the model that did not validate, one line each

    @property
    def files_reviewed(self) -> int:
        return len(self.reviewed)

    @property
    def files_skipped(self) -> int:
        return len({s.path for s in self.not_reviewed} - set(self.reviewed))


@dataclass
class _Progress:
    findings: list[tuple[Batch, BatchAnswer]] = field(default_factory=list)
    left_out: list[Skipped] = field(default_factory=list)  # skipped, or given up on
    overflow: list[Skipped] = field(default_factory=list)  # what the latest plan could not fit
    done: set[str] = field(default_factory=set)  # files with a part reviewed
    failed: set[str] = field(default_factory=set)  # files given up on
    note: str = ""
    quota: bool = False
    shrunk: bool = False
    too_large: int = 0  # batches the provider refused as too large after shrinking

    @property
    def not_reviewed(self) -> list[Skipped]:
        return [*self.left_out, *self.overflow]


class ReviewEngine:
    def __init__(
        self,
        model: BaseChatModel,
        setup: ReviewSetup,
        *,
        memory: MemoryMiddleware | None,
        tools: Sequence[BaseTool],
        estimator: TokenEstimator | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        progress: ProgressHook | None = None,
    ) -> None:
        """``progress`` hears of every model request as it is sent and answered."""
        self.model = model
        self.setup = setup
        self.memory = memory
        self.tools = list(tools)
        self.estimator = estimator or TokenEstimator()
        self.cost = Cost()
        self._clock = clock
        self._extra = ""
        self._earlier = ""
        self._deadline = clock() + setup.timeout_s
        self._files: list[ChangedFile] = []
        self._format = answers.response_format()
        self._budget = RequestBudget(
            limit=setup.profile.input_tokens, estimator=self.estimator, cost=self.cost
        )
        self._limits = ProviderLimits(
            deadline=self._deadline, estimate=self._budget.estimate, clock=clock, sleep=sleep
        )
        self._progress = progress
        self._part, self._part_files, self._planned = "the review", 0, 1

    # -- the review --------------------------------------------------------------------------

    def review(
        self,
        reader: PullRequestReader,
        *,
        extra: str = "",
        earlier: str = "",
        unchanged: frozenset[str] = frozenset(),
    ) -> ReviewResult:
        """Review the pull request; ``extra`` is added to every request (a comment's request,
        a note that memory is over budget), ``earlier`` to every batch (the open findings of
        earlier reviews); ``unchanged`` files are not reviewed again (an incremental review)."""
        info = reader.info()
        attributes = reader.base_file_content(GITATTRIBUTES) or ""
        files = reader.changed_files()
        chosen, skipped = select_files(
            [f for f in files if f.path not in unchanged],
            attributes=attributes,
            exclude=self.setup.exclude,
        )
        skipped = [*skipped, *(Skipped(f.path, UNCHANGED) for f in files if f.path in unchanged)]
        if not chosen:
            return self._nothing_to_review(skipped)
        pr_header = header(info, self.setup.repository, description_chars=self._description())
        self._extra, self._earlier = extra, earlier
        self._files = files
        progress = _Progress(left_out=list(skipped))
        self._review_batches(chosen, pr_header, progress)
        if progress.too_large and not progress.findings:
            raise AgentError(
                (
                    "The model provider refused every request as too large for its input limit "
                    f"({self.setup.profile.describe()}): lower ",
                    Setting("max_memory_kb"),
                    ", or set ",
                    Setting("max_input_tokens"),
                    " to the limit your model really has.",
                )
            )
        answer = self._answer(pr_header, progress)
        return self._result(answer, chosen, progress)

    def maintain(self, task: str) -> ReviewResult:
        """One conversation on memory alone (scheduled maintenance), within the same limits."""
        self._working_on("memory maintenance", 0, planned=1)
        try:
            answer, _ = self._converse(task, max(1, self.setup.max_model_calls), tools=self.tools)
        except DailyQuotaError as exc:
            return ReviewResult("", QUOTA, False, self.cost, (), (), str(exc))
        return ReviewResult(answer, SKIPPED, True, self.cost, (), ())

    def _review_batches(
        self, chosen: list[ReviewFile], pr_header: str, progress: _Progress
    ) -> None:
        plan = self._plan(chosen, pr_header, first=True)
        progress.overflow = list(plan.not_reviewed)
        pending = list(plan.batches)
        total, index = len(pending), 0
        planned_at = self.estimator.factor
        while pending and not progress.quota:
            if (
                index
                and _recalibrated(planned_at, self.estimator.factor)
                and _starts_clean(pending[0], progress.done)
            ):
                # The provider's usage says requests hold fewer tokens than planned for: pack
                # what is left again (only at a file boundary, so no part is shown twice).
                pending = self._replan(chosen, pr_header, pending, progress)
                total, planned_at = index + len(pending), self.estimator.factor
                continue
            batch = pending.pop(0)
            index += 1
            try:
                answer = self._batch(
                    pr_header, batch, index=index, total=total, chosen=chosen, progress=progress
                )
            except RequestTooLargeError as exc:
                if progress.shrunk:
                    progress.too_large += 1
                    self._give_up(progress, [batch], "too large for the model's input limit")
                    continue
                progress.shrunk = True
                self.estimator.at_least(exc.estimated, self.setup.profile.input_tokens)
                pending = self._replan(chosen, pr_header, [batch, *pending], progress)
                index -= 1
                total, planned_at = index + len(pending), self.estimator.factor
                continue
            except DailyQuotaError as exc:
                progress.quota, progress.note = True, str(exc)
                self._give_up(progress, [batch, *pending], "the model's daily quota is used up")
                return
            except AgentRunError as exc:
                if not progress.findings:
                    raise
                progress.note = f"The review stopped early: {exc}"
                self._give_up(progress, [batch, *pending], "the review stopped early")
                return
            progress.findings.append((batch, answer))
            progress.done.update(batch.paths)

    def _batch(
        self,
        pr_header: str,
        batch: Batch,
        *,
        index: int,
        total: int,
        chosen: list[ReviewFile],
        progress: _Progress,
    ) -> BatchAnswer:
        view = BatchView(
            index, total, _diff(batch), _elsewhere(chosen, batch), progress.not_reviewed
        )
        message = self._batch_message(pr_header, view)
        calls = self._calls_for(total - index + 1, single=total == 1)
        planned = self.cost.model_calls + (total - index + 1) + (1 if total > 1 else 0)
        self._working_on(f"batch {index} of {total}", len(batch.paths), planned=planned)
        text, structured = self._converse(message, calls, tools=self.tools, structured=True)
        return answers.parse(structured, text)

    def _replan(
        self,
        chosen: list[ReviewFile],
        pr_header: str,
        pending: list[Batch],
        progress: _Progress,
    ) -> list[Batch]:
        """Plan again what is still to review: the pending batches' files and the overflow."""
        wanted = {path for batch in pending for path in batch.paths}
        wanted |= {s.path for s in progress.overflow}
        files = [f for f in chosen if f.file.path in wanted - progress.failed]
        plan = self._plan(files, pr_header, first=False)
        progress.overflow = list(plan.not_reviewed)
        return list(plan.batches)

    @staticmethod
    def _give_up(progress: _Progress, batches: list[Batch], reason: str) -> None:
        for batch in batches:
            progress.left_out += _unreviewed(batch, reason)
            progress.failed.update(batch.paths)

    def _answer(self, pr_header: str, progress: _Progress) -> str:
        """The review's summary: the one batch's, or the last request's from every part's."""
        if len(progress.findings) <= 1:
            return progress.findings[0][1].summary if progress.findings else ""
        findings = self._fit_findings(pr_header, progress.findings)
        if progress.quota:  # no request is left to write the review: the findings as found
            return _as_found(findings)
        message = synthesis_message(
            pr_header,
            findings,
            memory=self.setup.memory,
            budget_bytes=self.setup.memory_budget_bytes,
            extra=self._extra,
        )
        self._working_on("the review's summary", 0, planned=self.cost.model_calls + 1)
        try:
            return self._converse(message, self._calls_for(0, single=False), tools=[])[0]
        except DailyQuotaError as exc:
            progress.quota = True
            progress.note = str(exc)
        except (RequestTooLargeError, AgentRunError) as exc:
            progress.note = f"The last request failed ({exc}); each part's summary is shown."
        return _as_found(findings)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, files: list[ReviewFile], pr_header: str, *, first: bool) -> ReviewPlan:
        capacity = self._capacity(pr_header, [f.file.path for f in files])
        calls = self._calls_left()
        if first:
            plan = plan_batches(files, capacity=capacity, count=self.estimator.count, max_batches=1)
            if not plan.not_reviewed and len(plan.batches) <= 1:
                return plan
        # More than one batch: one call is kept for the last request that writes the review.
        return plan_batches(
            files, capacity=capacity, count=self.estimator.count, max_batches=max(1, calls - 1)
        )

    def _capacity(self, pr_header: str, paths: list[str]) -> int:
        """Tokens a batch's diff may take: the input limit less everything else in the request."""
        limit = self.setup.profile.input_tokens
        frame = self._batch_message(pr_header, BatchView(1, 2, "", paths, ()))
        tools = [tool_schema(t) for t in [*self.tools, *self._memory_tools()]]
        tools += answer_tools(self._format)
        fixed = self.estimator.count_request(self._system_text(), [frame], tools)
        room = max(MIN_TOOL_ROOM, int(limit * TOOL_ROOM))
        return max(0, limit - fixed - room)

    def _batch_message(self, pr_header: str, view: BatchView) -> str:
        return batch_message(
            pr_header,
            view,
            memory=self.setup.memory,
            budget_bytes=self.setup.memory_budget_bytes,
            extra=self._extra,
            earlier=self._earlier,
        )

    def _description(self) -> int:
        return description_chars(self.setup.profile.input_tokens, self.estimator)

    def _calls_left(self) -> int:
        return max(0, self.setup.max_model_calls - self.cost.model_calls)

    def _calls_for(self, batches_left: int, *, single: bool) -> int:
        """Model calls one conversation may make: one, plus tool rounds while calls are spare."""
        left = self._calls_left()
        if single:
            return max(1, left)
        spare = left - batches_left - 1  # one per batch still to go, one for the last request
        return 1 + max(0, min(EXTRA_CALLS, spare))

    # -- one conversation --------------------------------------------------------------------

    def _converse(
        self, message: str, calls: int, *, tools: Sequence[BaseTool], structured: bool = False
    ) -> tuple[str, dict[str, Any] | None]:
        """One conversation: its text answer, and the answer tool's arguments when asked for
        (``structured``) and given."""
        middleware: list[AgentMiddleware[Any, Any, Any]] = [
            *([self.memory] if self.memory is not None else []),
            *([_Announce(self._progress, self._request_progress)] if self._progress else []),
            LastCallAnswers(calls),
            self._budget,
            self._limits,
        ]
        outcome = run_agent(
            self.model,
            tools=tools,
            middleware=middleware,
            system_prompt=self.setup.system_prompt,
            task=message,
            timeout_s=max(1.0, self._deadline - self._clock()),
            max_model_calls=calls,
            provider=self.setup.provider,
            response_format=self._format if structured else None,
        )
        return outcome.answer, outcome.structured

    # -- progress ----------------------------------------------------------------------------

    def _working_on(self, part: str, files: int, *, planned: int) -> None:
        self._part, self._part_files, self._planned = part, files, planned

    def _request_progress(self, stage: Stage, request: ModelRequest[Any]) -> RequestProgress:
        # Sent: the budget (inside) has not counted the call yet; answered: it has.
        number = self.cost.model_calls + (1 if stage == SENT else 0)
        return RequestProgress(
            stage=stage,
            request=number,
            planned=max(self._planned, number),
            part=self._part,
            files=self._part_files,
            estimated_tokens=self._budget.estimate(request),
            tokens_in=self.cost.tokens_in,
            tokens_out=self.cost.tokens_out,
        )

    def _system_text(self) -> str:
        """The system message as the memory middleware will send it, for planning."""
        memory = self.memory.memory_block() if self.memory is not None else ""
        return f"{self.setup.system_prompt}\n\n{memory}"

    def _memory_tools(self) -> list[BaseTool]:
        if self.memory is None:
            return []
        return [t for t in self.memory.tools if isinstance(t, BaseTool)]

    def _fit_findings(
        self, pr_header: str, findings: list[tuple[Batch, BatchAnswer]]
    ) -> list[tuple[str, str]]:
        """Each part's summary and findings, cut evenly so the last request fits."""
        named = [(_files_label(batch), _part_text(answer)) for batch, answer in findings]
        frame = synthesis_message(
            pr_header,
            [(files, "") for files, _ in named],
            memory=self.setup.memory,
            budget_bytes=self.setup.memory_budget_bytes,
            extra=self._extra,
        )
        tools = [tool_schema(t) for t in self._memory_tools()]
        fixed = self.estimator.count_request(self._system_text(), [frame], tools)
        room = self.setup.profile.input_tokens - fixed - MIN_TOOL_ROOM
        each = self.estimator.chars_for(max(0, room) // max(1, len(named)))
        return [
            (files, text if len(text) <= each else text[:each] + "\n[findings cut to fit]")
            for files, text in named
        ]

    # -- the result --------------------------------------------------------------------------

    def _nothing_to_review(self, skipped: list[Skipped]) -> ReviewResult:
        answer = (
            "Nothing to review: every changed file is generated, vendored, excluded or has no "
            "diff (see the list of files not reviewed)."
        )
        return ReviewResult(answer, SKIPPED, True, self.cost, (), tuple(skipped))

    def _result(self, answer: str, chosen: list[ReviewFile], progress: _Progress) -> ReviewResult:
        reviewed = tuple(
            dict.fromkeys(path for batch, _ in progress.findings for path in batch.paths)
        )
        left_out = tuple(progress.not_reviewed)
        if progress.quota:
            outcome = QUOTA
        else:
            chosen_paths = {f.file.path for f in chosen}
            missing = chosen_paths - set(reviewed)
            partly = any(s.path in chosen_paths for s in left_out)
            outcome = PARTIAL if missing or partly or progress.note else REVIEWED
        parts = [answer for _, answer in progress.findings]
        return ReviewResult(
            answer,
            outcome,
            not progress.quota,
            self.cost,
            reviewed,
            left_out,
            progress.note,
            findings=merge_findings((p.findings for p in parts), self._files),
            fixed=tuple(dict.fromkeys(i for p in parts for i in p.fixed)),
            dropped=tuple(d for p in parts for d in p.dropped),
        )


class _Announce(AgentMiddleware[AgentState[Any], Any, Any]):
    """Tells a progress hook of each model request, as it is sent and as it is answered."""

    def __init__(
        self,
        hook: ProgressHook,
        describe: Callable[[Stage, ModelRequest[Any]], RequestProgress],
    ) -> None:
        super().__init__()
        self._hook, self._describe = hook, describe

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        self._hook(self._describe(SENT, request))
        response = handler(request)
        self._hook(self._describe(ANSWERED, request))
        return response


def skipped(answer: str) -> ReviewResult:
    """A run that needed no model call (maintenance with nothing changed)."""
    return ReviewResult(answer, SKIPPED, True, Cost(), (), ())


def _part_text(answer: BatchAnswer) -> str:
    """A part's summary and its findings, one line each, for the last request."""
    lines = [answer.summary.strip() or "(no summary)"]
    lines += [f"- [{f.severity}] `{f.path}` line {f.line}: {f.title}" for f in answer.findings]
    return "\n".join(lines)


def _as_found(findings: list[tuple[str, str]]) -> str:
    """The batches' summaries under their files, when no last request can write the review."""
    return "\n\n".join(f"**{files}**\n\n{text.strip()}" for files, text in findings)


def _diff(batch: Batch) -> str:
    return "\n".join(part.text.rstrip("\n") for part in batch.parts) + "\n"


def _elsewhere(chosen: list[ReviewFile], batch: Batch) -> list[str]:
    here = set(batch.paths)
    return [f.file.path for f in chosen if f.file.path not in here]


def _files_label(batch: Batch) -> str:
    paths = list(batch.paths)
    return ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")


def _unreviewed(batch: Batch, reason: str) -> list[Skipped]:
    return [Skipped(path, reason) for path in batch.paths]


def _recalibrated(planned_at: float, now: float) -> bool:
    """The estimate moved enough since the plan for packing again to matter."""
    return abs(now - planned_at) / planned_at > RECALIBRATED


def _starts_clean(batch: Batch, done: set[str]) -> bool:
    """The batch holds no part of a file whose other parts were already reviewed."""
    return not done.intersection(batch.paths)
