"""The review engine: one pull request → one review that fits the model.

The diff reaches the model in the first request of each batch, not through one tool call per
file. Files are chosen and ordered by review value (``selection``), compressed and packed into
batches that each fit the model's input limit (``batches``). Each batch's request is answered as
data (``answer``: a summary, findings on lines of the diff, the earlier findings it fixes); the
batches' findings are merged without repeats (``ledger.merge_findings``) and, with more than one
batch, the last batch's request is also given the earlier ones' summaries and findings and writes
the review's summary; only when those do not fit beside its diff does a last request of its own
write the summary. Every batch has the same memory and the same
tools (reading a file or another file's patch, editing memory), bounded by the ``RequestBudget``.
Whatever is not reviewed is listed with its reason, never dropped silently.

Provider limits: a request the provider refuses as too large makes the engine shrink its batches
once (the estimator learns the request was bigger than it thought) and retry; a second refusal
leaves that batch's files unreviewed. A request our own estimate keeps from going out is handled
the same way, but it is never counted as the provider's refusal: the provider never saw it. The
day's quota ends the review at once (``quota``).

A plan of one batch is the whole review in one conversation (every tool, memory), so it is
always planned at that conversation's room, whichever plan found it.

An answer that does not parse (cut off at the output cap, broken JSON, no text) is asked for
once more; a second one leaves the batch's files unreviewed with the reason, and its text is
never passed on. A model stopped for repeating a refused call keeps what it wrote, if that is
an answer; else its files are unreviewed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from memory_action.agent.progress import (
    ANSWERED,
    SENT,
    ProgressHook,
    RequestProgress,
    Stage,
)
from memory_action.agent.runner import (
    EMPTY_ANSWER,
    REPEATED,
    AgentOutcome,
    AgentRunError,
    run_agent,
)
from memory_action.errors import AgentError, Setting
from memory_action.github.pull_request import ChangedFile, PullRequestReader
from memory_action.memory.middleware import MemoryMiddleware
from memory_action.model.profile import ModelProfile
from memory_action.model.tokens import TokenEstimator
from memory_action.review import answer as answers
from memory_action.review.answer import BatchAnswer, UnusableAnswerError
from memory_action.review.batches import OVER_BUDGET, Batch, ReviewPlan, plan_batches
from memory_action.review.budget import (
    TURN_RESERVE,
    Cost,
    LastCallAnswers,
    OfferOnly,
    RequestBudget,
    answer_tools,
    tool_schema,
)
from memory_action.review.consolidation import (
    EDIT_TOOL,
    MemoryPart,
    consolidation_note,
    part_message,
    split_memory,
)
from memory_action.review.consolidation import (
    SYSTEM_PROMPT as CONSOLIDATE_PROMPT,
)
from memory_action.review.dismissals import HeldBack
from memory_action.review.findings import Finding
from memory_action.review.findings_suggestions import vetted
from memory_action.review.gitattributes import GITATTRIBUTES
from memory_action.review.ledger import merge_findings
from memory_action.review.limits import DailyQuotaError, ProviderLimits, RequestTooLargeError
from memory_action.review.messages import (
    BatchView,
    batch_message,
    bounded,
    description_chars,
    header,
    synthesis_message,
    untrusted_chars,
)
from memory_action.review.selection import ReviewFile, Skipped, select_files
from memory_action.safety.scrub import redact

REVIEWED, PARTIAL, QUOTA, SKIPPED = "reviewed", "partial", "quota", "skipped"
TOOL_ROOM = 0.03  # of the input limit, kept free in a batch for tool results and the reply turn
MIN_TOOL_ROOM = 240
RECALIBRATED = 0.03  # a change of the token estimate worth packing what is left again
EXTRA_CALLS = 2  # tool rounds a batch (or the last request) may take when calls are left
UNCHANGED = "unchanged since the last review"
MIN_DIFF_SHARE = 0.125  # of the input limit: less room for the diff makes memory consolidate first
PART_SHARE = 0.4  # of a consolidation request's room for its part: the edit quotes it again
NO_ROOM = "no room in the model's input limit"
UNDONE = (
    "Memory edits made in a conversation whose answer could not be used were undone: they are "
    "not saved or proposed."
)
REFUSED = "too large for the model's input limit"  # the provider refused it, after shrinking
NOT_SENT = "too large for one request to this model"  # our estimate kept it from going out
SYNTHESIS_SHARE = 8  # the parts' findings take at most 1/8 of the last request
NAMES_SHARE = 7  # the other requests' file names take at most 1/7 of a request
MIN_PART_CHARS = 300  # of an earlier part's answer beside the last batch: about its summary
CUT_NOTE = 10  # tokens kept for the note that says a part's answer was cut


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class ReviewResult:
    answer: str  # the review, or "" when none was written (quota before any finding)
    outcome: str  # reviewed | partial | quota | skipped
    finished: bool  # the run ended as planned (memory may be saved)
    cost: Cost
    reviewed: tuple[str, ...] = ()  # none: a maintenance run, or nothing got reviewed
    not_reviewed: tuple[Skipped, ...] = ()  # skipped by choice and left out by limits, with reasons
    note: str = ""  # one line for people: the quota, a limit that cut the review
    findings: tuple[Finding, ...] = ()  # merged across batches, most severe first
    fixed: tuple[str, ...] = ()  # ids of earlier findings the model says are fixed
    dropped: tuple[str, ...] = ()  # findings of the model that did not validate, one line each
    held_back: tuple[HeldBack, ...] = ()  # not posted: a dismissal in memory matched them

    @property
    def files_reviewed(self) -> int:
        return len(self.reviewed)

    @property
    def files_skipped(self) -> int:
        return len({s.path for s in self.not_reviewed} - set(self.reviewed))


@dataclass(kw_only=True)
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
    not_sent: int = 0  # batches our own estimate kept from going out after shrinking
    retried: set[tuple[str, ...]] = field(default_factory=set)  # batches asked a second time
    summary: str | None = None  # the whole review's, when the last batch wrote it
    undone: int = 0  # conversations whose memory edits were undone: their answers were not used

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
        self.estimator = estimator or TokenEstimator.for_encoding(setup.profile.encoding)
        self.cost = Cost()
        self._clock = clock
        self._extra = ""
        self._earlier = ""
        self._rounds = True  # the batches of the plan may take tool rounds
        self._planning_notes: list[str] = []  # what planning did or could not do, for people
        self._left_out: list[Skipped] = []  # the review's files not reviewed, so far
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
        skipped = [
            *skipped,
            *(Skipped(path=f.path, reason=UNCHANGED) for f in files if f.path in unchanged),
        ]
        if not chosen:
            return self._nothing_to_review(skipped)
        pr_header = header(info, self.setup.repository, description_chars=self._description())
        share = 2 * untrusted_chars(self.setup.profile.input_tokens, self.estimator)
        self._extra = bounded(extra, share, "the notes for this review")
        self._earlier = bounded(earlier, share, "the open findings of earlier reviews")
        self._files = files
        progress = _Progress(left_out=list(skipped))
        self._review_batches(chosen, pr_header, progress)
        if not progress.findings and progress.failed and not progress.note:
            progress.note = (
                "No part of the review could be used: the model's answers did not parse or it "
                "did not answer (each file is listed with the reason)."
            )
        if progress.undone:
            progress.note = " ".join(filter(None, [progress.note, UNDONE]))
        if progress.too_large and not progress.not_sent and not progress.findings:
            raise AgentError(
                (
                    "The model provider refused every request as too large for its input limit (",
                    *self.setup.profile.words(),
                    "): lower ",
                    Setting(name="max_memory_kb"),
                    ", or set ",
                    Setting(name="max_input_tokens"),
                    " to the limit your model really has.",
                )
            )
        answer = _with_notes(self._answer(pr_header, progress), progress.findings)
        return self._result(answer, chosen, progress)

    def maintain(self, task: str) -> ReviewResult:
        """One conversation on memory alone (scheduled maintenance), within the same limits;
        memory too large for its request is consolidated in parts first."""
        first = ""
        if not self._fits(task):
            first = self._consolidate(reserve=0)
        if not self._fits(task):
            note = " ".join(filter(None, [first, self._no_room_note()]))
            return ReviewResult(
                answer=first or note,
                outcome=SKIPPED,
                finished=True,
                cost=self.cost,
                note=note,
            )
        self._working_on("memory maintenance", 0, planned=self.cost.model_calls + 1)
        try:
            answer = self._converse(task, max(1, self._calls_left()), tools=self.tools).answer
        except DailyQuotaError as exc:
            return ReviewResult(
                answer=first,
                outcome=QUOTA,
                finished=False,
                cost=self.cost,
                note=str(exc),
            )
        except RequestTooLargeError as exc:
            note = " ".join(filter(None, [first, f"Maintenance stopped: {exc}"]))
            return ReviewResult(
                answer=first or note,
                outcome=SKIPPED,
                finished=True,
                cost=self.cost,
                note=note,
            )
        return ReviewResult(
            answer=answer,
            outcome=SKIPPED,
            finished=True,
            cost=self.cost,
            note=first,
        )

    def _review_batches(
        self, chosen: list[ReviewFile], pr_header: str, progress: _Progress
    ) -> None:
        self._left_out = progress.left_out  # grows as batches are given up on
        self._make_room(chosen, pr_header)
        plan = self._plan(chosen, pr_header, whole=True)
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
                pending = self._replan(chosen, pr_header, pending, progress, whole=False)
                total, planned_at = index + len(pending), self.estimator.factor
                continue
            batch = pending.pop(0)
            index += 1
            closing = not pending and bool(progress.findings)
            try:
                answer, closed = self._batch(
                    pr_header,
                    batch,
                    index=index,
                    total=total,
                    chosen=chosen,
                    progress=progress,
                    closing=closing,
                )
            except RequestTooLargeError as exc:
                if self._given_up_as_too_large(progress, batch, exc):
                    continue
                index -= 1
                pending = self._replan(
                    chosen, pr_header, [batch, *pending], progress, whole=index == 0
                )
                total, planned_at = index + len(pending), self.estimator.factor
                continue
            except DailyQuotaError as exc:
                progress.quota, progress.note = True, str(exc)
                self._give_up(progress, [batch, *pending], "the model's daily quota is used up")
                return
            except UnusableAnswerError as exc:
                if exc.retry and batch.paths not in progress.retried and self._calls_left():
                    progress.retried.add(batch.paths)
                    pending.insert(0, batch)
                    index -= 1
                else:
                    self._give_up(progress, [batch], exc.reason)
                continue
            except AgentRunError as exc:
                if not progress.findings:
                    raise
                progress.note = f"The review stopped early: {exc}"
                self._give_up(progress, [batch, *pending], "the review stopped early")
                return
            if closed:
                progress.summary = answer.summary
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
        closing: bool = False,
    ) -> tuple[BatchAnswer, bool]:
        """One batch's answer, and whether it wrote the review's summary: a ``closing`` batch
        (the last of several) does when the earlier parts' answers fit beside its diff."""
        view = BatchView(
            index=index,
            count=total,
            diff=_diff(batch),
            elsewhere=_elsewhere(chosen, batch),
            skipped=progress.not_reviewed,
        )
        closed = self._closing_message(pr_header, view, progress) if closing else None
        message = closed or self._batch_message(pr_header, view)
        # A batch that writes the summary is the last request: no call is kept after it.
        calls = self._calls_for(0 if closed else total - index + 1, single=total == 1)
        last = 0 if closed or total == 1 else 1  # a last request of its own for the summary
        planned = self.cost.model_calls + (total - index + 1) + last
        self._working_on(f"batch {index} of {total}", len(batch.paths), planned=planned)
        # With more than one batch, memory is edited by the request that writes the summary,
        # which sees every part's findings: another batch is offered only the tools that read
        # the pull request.
        offer = None if total == 1 or closed else frozenset(t.name for t in self.tools)
        self._budget.shown_whole = batch.whole
        with self._edits_undone_unless_used(progress):
            try:
                outcome = self._converse(
                    message, calls, tools=self.tools, structured=True, offer=offer
                )
            except AgentRunError as exc:
                if exc.outcome.stop_reason == EMPTY_ANSWER:
                    raise UnusableAnswerError("the model gave no answer") from exc
                if exc.outcome.stop_reason != REPEATED:
                    raise
                try:  # what the model wrote before it was stopped, if that is an answer
                    return answers.parse(None, exc.outcome.answer), closed is not None
                except UnusableAnswerError:
                    raise UnusableAnswerError(
                        "the model repeated a refused tool call instead of answering", retry=False
                    ) from exc
            finally:
                self._budget.shown_whole = frozenset()
            parsed = answers.parse(outcome.structured, outcome.answer, cut_off=outcome.cut_off)
        return parsed, closed is not None

    @contextmanager
    def _edits_undone_unless_used(self, progress: _Progress) -> Iterator[None]:
        """What a model wrote to memory in a conversation whose answer is not used (it looped,
        was cut off, was refused) is as doubtful as that answer, and a saved edit would be
        proposed ticked: it is undone."""
        mark = self.memory.checkpoint() if self.memory is not None else None
        try:
            yield
        except Exception:
            if self.memory is not None and mark is not None and self.memory.roll_back(mark):
                progress.undone += 1
            raise

    def _closing_message(self, pr_header: str, view: BatchView, progress: _Progress) -> str | None:
        """The last batch's message with the earlier parts' summaries and findings (cut evenly
        to the room its diff leaves), asking for the review's summary; None when less than about
        each part's summary fits (then a last request of its own writes the summary)."""
        limit = self.setup.profile.input_tokens
        calls = self._calls_for(0, single=False)
        offered = [*self.tools, *self._memory_tools()] if calls > 1 else []
        tools = [tool_schema(t) for t in offered] + answer_tools(self._format)
        reserve = max(MIN_TOOL_ROOM, int(limit * TOOL_ROOM)) if calls > 1 else TURN_RESERVE
        named = [(_files_label(batch), _part_text(answer)) for batch, answer in progress.findings]
        frame = self._batch_message(pr_header, view, parts=[(f, "") for f, _ in named])
        room = limit - reserve - self.estimator.count_request(self._system_text(), [frame], tools)
        # Each part's summary comes first in its text, so a cut keeps it; the findings are
        # posted as they are whatever the summary was written from.
        notes = CUT_NOTE * len(named)
        chars = self.estimator.chars_for(min(room, limit // SYNTHESIS_SHARE) - notes)
        if chars // len(named) < MIN_PART_CHARS:
            return None
        message = self._batch_message(pr_header, view, parts=_cut_evenly(named, chars))
        fits = self.estimator.count_request(self._system_text(), [message], tools) + reserve
        return message if fits <= limit else None

    def _replan(
        self,
        chosen: list[ReviewFile],
        pr_header: str,
        pending: list[Batch],
        progress: _Progress,
        *,
        whole: bool,
    ) -> list[Batch]:
        """Plan again what is still to review: the pending batches' files and the overflow;
        ``whole`` when no batch has been asked yet (the plan is then the whole review)."""
        wanted = {path for batch in pending for path in batch.paths}
        wanted |= {s.path for s in progress.overflow}
        files = [f for f in chosen if f.file.path in wanted - progress.failed]
        plan = self._plan(files, pr_header, whole=whole)
        progress.overflow = list(plan.not_reviewed)
        return list(plan.batches)

    def _given_up_as_too_large(
        self, progress: _Progress, batch: Batch, exc: RequestTooLargeError
    ) -> bool:
        """A batch too large for its request: given up on when the batches were shrunk once
        already (True), else the estimate learns the request was larger than it thought."""
        if progress.shrunk:
            if exc.sent:
                progress.too_large += 1
            else:
                progress.not_sent += 1
            self._give_up(progress, [batch], REFUSED if exc.sent else NOT_SENT)
            return True
        progress.shrunk = True
        self.estimator.at_least(exc.estimated, self.setup.profile.input_tokens)
        return False

    @staticmethod
    def _give_up(progress: _Progress, batches: list[Batch], reason: str) -> None:
        for batch in batches:
            progress.left_out += _unreviewed(batch, reason)
            progress.failed.update(batch.paths)

    def _answer(self, pr_header: str, progress: _Progress) -> str:
        """The review's summary: the one batch's, the last batch's when it wrote the review's,
        else a last request's of its own from every part's."""
        if progress.summary is not None:  # the last batch wrote it
            return progress.summary
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
            return self._converse(message, self._calls_for(0, single=False), tools=[]).answer
        except DailyQuotaError as exc:
            progress.quota = True
            progress.note = str(exc)
        except (RequestTooLargeError, AgentRunError) as exc:
            progress.note = f"The last request failed ({exc}); each part's summary is shown."
        return _as_found(findings)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, files: list[ReviewFile], pr_header: str, *, whole: bool) -> ReviewPlan:
        """The batches for ``files``; ``whole``: they are the whole review (no batch asked yet),
        so a plan of one batch is one conversation with every tool and memory."""
        paths = [f.file.path for f in files]
        capacity = self._capacity(pr_header, paths, single=False, rounds=False)
        calls = self._calls_left()
        if capacity < 1 or calls < 1:
            # Nothing fits (memory or the prompt fill the window) or no call is left: every file
            # is listed with the reason, and the run goes on to report it.
            reason = NO_ROOM if capacity < 1 else "no model call left"
            if capacity < 1:
                self._planning_notes.append(self._no_room_note())
            return ReviewPlan(
                batches=(),
                not_reviewed=tuple(Skipped(path=f.file.path, reason=reason) for f in files),
            )
        count = self.estimator.count
        setting = self.setup.max_model_calls
        alone: ReviewPlan | None = None
        if whole:
            single = self._capacity(pr_header, paths, single=True, rounds=True)
            alone = plan_batches(
                files, capacity=max(1, single), count=count, max_batches=1, max_model_calls=setting
            )
            if alone.complete:  # a line cut to fit would be cut in any plan
                self._rounds = True
                return alone
        # A plan that leaves files over is made again with room for their list in every batch.
        chosen = self._several(files, pr_header, calls, overflow=False)
        if chosen.not_reviewed:
            chosen = self._several(files, pr_header, calls)
        if alone is None or len(chosen.batches) > 1:
            return chosen
        # One batch would be sent as the one request of the review is, with every tool and
        # memory, which the review does not fit: batches no larger than that request's room
        # make two or more, while calls allow; else the one request holds what fits it.
        if calls - 1 > 1:
            smaller = plan_batches(
                files,
                capacity=max(1, min(capacity, single)),
                count=count,
                max_batches=calls - 1,
                max_model_calls=setting,
            )
            if len(smaller.batches) > 1:
                self._rounds = False
                return smaller
        self._rounds = True
        return alone

    def _several(
        self, files: list[ReviewFile], pr_header: str, calls: int, *, overflow: bool = True
    ) -> ReviewPlan:
        """More than one batch: one call is kept for the last request that writes the review.
        Tool rounds (and so the tools' schemas and room for their results) only when they
        cost no extra request and the plan leaves calls to spare for them; else each batch is
        one request, filled."""
        paths = [f.file.path for f in files]
        count, setting = self.estimator.count, self.setup.max_model_calls
        most = max(1, calls - 1)
        capacity = self._capacity(pr_header, paths, single=False, rounds=False, overflow=overflow)
        filled = plan_batches(
            files, capacity=max(1, capacity), count=count, max_batches=most, max_model_calls=setting
        )
        rounds = self._capacity(pr_header, paths, single=False, rounds=True, overflow=overflow)
        plan = plan_batches(
            files, capacity=max(1, rounds), count=count, max_batches=most, max_model_calls=setting
        )
        self._rounds = (
            calls - len(plan.batches) - 1 > 0
            and not plan.not_reviewed
            and len(plan.batches) <= len(filled.batches)
        )
        return plan if self._rounds else filled

    def _make_room(self, chosen: list[ReviewFile], pr_header: str) -> None:
        """Memory over budget that leaves the diff too little room is consolidated first."""
        limit = self.setup.profile.input_tokens
        paths = [f.file.path for f in chosen]
        capacity = self._capacity(pr_header, paths, single=False, rounds=False)
        if capacity < limit * MIN_DIFF_SHARE:
            self._planning_notes.append(self._consolidate(reserve=1))

    def _fits(self, task: str) -> bool:
        """A conversation on ``task`` with the whole memory and every tool fits one request."""
        tools = [tool_schema(t) for t in [*self.tools, *self._memory_tools()]]
        fixed = self.estimator.count_request(self._system_text(), [task], tools)
        return fixed + max(MIN_TOOL_ROOM, int(self.setup.profile.input_tokens * TOOL_ROOM)) <= (
            self.setup.profile.input_tokens
        )

    def _no_room_note(self) -> str:
        limit = self.setup.profile.input_tokens
        system = self.estimator.count(self._system_text())
        return (
            f"The system prompt with memory takes about {system:,} of the model's {limit:,} "
            "input tokens, which leaves no room for the request: consolidate memory (or lower "
            "max_memory_kb), list fewer memory_sources, or raise max_input_tokens."
        )

    def _consolidate(self, *, reserve: int) -> str:
        """Writable memory over its budget, consolidated in parts that each fit a request, one
        conversation a part while more than ``reserve`` calls are left; the note says what
        happened ("" when memory is within its budget)."""
        writable = self._writable_memory()
        budget = self.setup.memory_budget_bytes
        if self.memory is None or writable is None or len(writable.encode()) <= budget:
            return ""
        before = len(writable.encode())
        tools = [t for t in self._memory_tools() if t.name == EDIT_TOOL]
        path = self.memory.files.writable.as_posix()

        def message(part: MemoryPart, index: int, count: int) -> str:
            return part_message(
                part, index=index, count=count, path=path, size=before, budget=budget
            )

        limit = self.setup.profile.input_tokens
        frame = message(MemoryPart(first_line=9999, last_line=9999, text=""), 9999, 9999)
        fixed = self.estimator.count_request(
            CONSOLIDATE_PROMPT, [frame], [tool_schema(t) for t in tools]
        )
        room = limit - fixed - max(MIN_TOOL_ROOM, int(limit * TOOL_ROOM))
        text = redact(writable, self.memory.files.masked)[0]
        parts = split_memory(text, self.estimator.chars_for(int(room * PART_SHARE)))
        done = 0
        for index, part in enumerate(parts, start=1):
            if room < 1 or self._calls_left() < 2 + reserve:
                break
            try:
                self._converse(
                    message(part, index, len(parts)),
                    2,
                    tools=tools,
                    system_prompt=CONSOLIDATE_PROMPT,
                    with_memory=False,
                )
            except RequestTooLargeError:
                pass  # the answer after an edit did not fit: the edit stands
            except (DailyQuotaError, AgentRunError):
                break
            done += 1
        after = len((self._writable_memory() or "").encode())
        return consolidation_note(before, after, budget, done)

    def _writable_memory(self) -> str | None:
        if self.memory is None:
            return None
        return next((s.content for s in self.memory.sources if s.writable), None)

    def _capacity(
        self,
        pr_header: str,
        paths: list[str],
        *,
        single: bool,
        rounds: bool,
        overflow: bool = True,
    ) -> int:
        """Tokens a batch's diff may take: the input limit less everything else in the request:
        a ``single`` batch is offered every tool, the batches of a larger review only the
        pull request's, and only when they may take tool ``rounds`` (which need room too).
        The files not reviewed are listed in every batch: those known, and with ``overflow``
        (several batches) every file, as if it were left over (the plan decides which are)."""
        limit = self.setup.profile.input_tokens
        over = OVER_BUDGET.format(max_model_calls=self.setup.max_model_calls)
        left = tuple(Skipped(path=p, reason=over) for p in paths) if overflow and not single else ()
        skipped = (*self._left_out, *left)
        view = (
            BatchView(index=1, count=1, diff="", elsewhere=(), skipped=skipped)
            if single
            else BatchView(index=1, count=2, diff="", elsewhere=paths, skipped=skipped)
        )
        frame = self._batch_message(pr_header, view)
        offered = [*self.tools, *(self._memory_tools() if single else [])] if rounds else []
        tools = [tool_schema(t) for t in offered] + answer_tools(self._format)
        fixed = self.estimator.count_request(self._system_text(), [frame], tools)
        room = max(MIN_TOOL_ROOM, int(limit * TOOL_ROOM)) if rounds else TURN_RESERVE
        return max(0, limit - fixed - room)

    def _batch_message(
        self, pr_header: str, view: BatchView, *, parts: Sequence[tuple[str, str]] = ()
    ) -> str:
        return batch_message(
            pr_header,
            view,
            # Memory is edited by the request that writes the summary.
            memory=self.setup.memory and (view.count == 1 or bool(parts)),
            parts=parts,
            names_chars=self._names_chars(),
            budget_bytes=self.setup.memory_budget_bytes,
            extra=self._extra,
            earlier=self._earlier,
        )

    def _names_chars(self) -> int:
        """Every file of the pull request is named (paths are cheap, and a model that is not
        told what exists asks), within a seventh of the input limit."""
        return self.estimator.chars_for(self.setup.profile.input_tokens // NAMES_SHARE)

    def _description(self) -> int:
        return description_chars(self.setup.profile.input_tokens, self.estimator)

    def _calls_left(self) -> int:
        return max(0, self.setup.max_model_calls - self.cost.model_calls)

    def _calls_for(self, batches_left: int, *, single: bool) -> int:
        """Model calls one conversation may make: one, plus tool rounds while calls are spare."""
        left = self._calls_left()
        if single:
            return max(1, left)
        if not self._rounds:
            return 1
        spare = left - batches_left - 1  # one per batch still to go, one for the last request
        return 1 + max(0, min(EXTRA_CALLS, spare))

    # -- one conversation --------------------------------------------------------------------

    def _converse(
        self,
        message: str,
        calls: int,
        *,
        tools: Sequence[BaseTool],
        structured: bool = False,
        system_prompt: str | None = None,
        with_memory: bool = True,
        offer: frozenset[str] | None = None,
    ) -> AgentOutcome:
        """One conversation's outcome: its text answer, the answer tool's arguments when asked
        for (``structured``) and given, and why it stopped; ``with_memory`` puts memory in its
        system prompt, ``offer`` limits the tools the model is offered."""
        middleware: list[AgentMiddleware[Any, Any, Any]] = [
            *([self.memory] if self.memory is not None and with_memory else []),
            *([_Announce(self._progress, self._request_progress)] if self._progress else []),
            LastCallAnswers(calls),
            *([OfferOnly(offer)] if offer is not None else []),
            self._budget,
            self._limits,
        ]
        return run_agent(
            self.model,
            tools=tools,
            middleware=middleware,
            system_prompt=self.setup.system_prompt if system_prompt is None else system_prompt,
            task=message,
            timeout_s=max(1.0, self._deadline - self._clock()),
            max_model_calls=calls,
            provider=self.setup.provider,
            response_format=self._format if structured else None,
        )

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
        """Each part's summary and findings, cut evenly so the last request fits, and to an
        eighth of the input limit in all: it writes a summary, the findings are posted as
        they are."""
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
        limit = self.setup.profile.input_tokens
        room = min(limit - fixed - MIN_TOOL_ROOM, limit // SYNTHESIS_SHARE)
        return _cut_evenly(named, self.estimator.chars_for(max(0, room)))

    # -- the result --------------------------------------------------------------------------

    def _nothing_to_review(self, skipped: list[Skipped]) -> ReviewResult:
        answer = (
            "Nothing to review: every changed file is generated, vendored, excluded or has no "
            "diff (see the list of files not reviewed)."
        )
        return ReviewResult(
            answer=answer,
            outcome=SKIPPED,
            finished=True,
            cost=self.cost,
            reviewed=(),
            not_reviewed=tuple(skipped),
        )

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
            answer=answer,
            outcome=outcome,
            finished=not progress.quota,
            cost=self.cost,
            reviewed=reviewed,
            not_reviewed=left_out,
            note=" ".join(dict.fromkeys(filter(None, [*self._planning_notes, progress.note]))),
            findings=vetted(merge_findings((p.findings for p in parts), self._files), self._files),
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
    return ReviewResult(answer=answer, outcome=SKIPPED, finished=True, cost=Cost())


def _part_text(answer: BatchAnswer) -> str:
    """A part's summary and its findings, one line each, for the last request."""
    lines = [answer.summary.strip() or "(no summary)"]
    lines += [f"- [{f.severity}] `{f.path}` line {f.line}: {f.title}" for f in answer.findings]
    return "\n".join(lines)


def _cut_evenly(named: list[tuple[str, str]], chars: int) -> list[tuple[str, str]]:
    """Each part's text cut to an even share of ``chars``, saying so where it was cut."""
    each = chars // max(1, len(named))
    return [
        (files, text if len(text) <= each else text[:each] + "\n[findings cut to fit]")
        for files, text in named
    ]


def _with_notes(answer: str, parts: list[tuple[Batch, BatchAnswer]]) -> str:
    """The review, with how its parts' answers came when not as the answer tool's call."""
    notes = dict.fromkeys(part.note for _, part in parts if part.note)
    return "\n\n".join([answer.strip(), *(f"> {note}" for note in notes)]) if notes else answer


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
    return [Skipped(path=path, reason=reason) for path in batch.paths]


def _recalibrated(planned_at: float, now: float) -> bool:
    """The estimate moved enough since the plan for packing again to matter."""
    return abs(now - planned_at) / planned_at > RECALIBRATED


def _starts_clean(batch: Batch, done: set[str]) -> bool:
    """The batch holds no part of a file whose other parts were already reviewed."""
    return not done.intersection(batch.paths)
