"""A comment that holds commands to the agent (``commands``), carried out without any model.

``route`` decides what a comment run does: ``remember``, ``forget`` and ``memory`` are answered
here and never start a review; ``review`` (or a comment without a command, on a pull request) is
a review, as before. Only people with write access to the repository may change or read memory
(``context.commenter_may_write``, asked of GitHub); anyone else gets a polite reply.

Where a change lands:

- the git store (``memory_store: git|auto``): committed memory, one commit per command, through
  the store's save path (three-way merges with runs that raced); the commit names the comment;
- a pull request with the cache store: ticked items of the proposal in the sticky comment (the
  rest of the comment kept), promoted when the pull request is merged, as a review's are;
- an issue with the cache store: nowhere (its run's cache token is read-only); the reply says so
  and how to enable it.

Every command gets an answer: a reaction on the comment (``+1`` when all was done, ``eyes`` when
not) and one reply, also written to the job summary.
"""

from __future__ import annotations

import dataclasses
import enum
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memory_action.commands import replies
from memory_action.commands.parse import Command, Commands, Verb, parse_commands
from memory_action.commands.replies import Answer
from memory_action.errors import GitHubError, UnsupportedEvent
from memory_action.github.pull_request import CommentPermissionError, ReactionContent
from memory_action.lifecycle.layers import StartingMemory
from memory_action.lifecycle.restore import restore
from memory_action.memory import items
from memory_action.memory.diff import memory_diff
from memory_action.memory.provenance import stamp_for_run, update
from memory_action.memory.state import Layer
from memory_action.memory.trust import Trust
from memory_action.plan import GitHubAccess, Plan, Services
from memory_action.publish.outcome import Outcome, RunResult
from memory_action.run.context import (
    COMMENT_EVENTS,
    REVIEW_COMMENT,
    RunContext,
    commenter_may_write,
)
from memory_action.run.scope import MemoryScope, committed_only, compute_scope
from memory_action.run.settings import ScopeKind, Settings
from memory_action.safety.outgoing import gate
from memory_action.safety.scrub import describe, find_secrets
from memory_action.store.base import SaveResult
from memory_action.store_wiring import uses_git


class Landing(enum.Enum):
    COMMITTED = "committed"  # saved as committed memory (the git store)
    STICKY = "sticky"  # a ticked item of the pull request's proposal
    NOWHERE = "nowhere"


def route(settings: Settings, context: RunContext, services: Services) -> RunResult | None:
    """The result of a comment's commands; None when the comment asks for a review."""
    if context.event_name not in COMMENT_EVENTS:
        return None
    commands = parse_commands(context.comment_body, settings.agent_name)
    if context.pull_request is None and not commands.found:
        raise UnsupportedEvent(
            f"issue_comment on an issue (not a pull request) without a command to "
            f"{settings.agent_name}"
        )
    if not commands.for_memory and context.pull_request is not None:
        return None
    return run_commands(settings, context, services, commands)


def run_commands(
    settings: Settings, context: RunContext, services: Services, commands: Commands
) -> RunResult:
    github = services.github
    if github is None:
        raise GitHubError("Comment commands need GitHub access.")
    answers: list[Answer] = []
    result = RunResult.untouched()
    if commands.for_memory and not commenter_may_write(context, github):
        answers.append(Answer(verb=Verb.MEMORY, text=replies.not_a_writer(), done=False))
    elif commands.for_memory and not settings.enable_memory:
        answers.append(
            Answer(
                verb=Verb.MEMORY, text="Memory is off here (`enable_memory: false`).", done=False
            )
        )
    elif commands.for_memory:
        with tempfile.TemporaryDirectory(prefix="memory-agent-") as scratch:
            # A person with write access wrote the command; no model reads anything else.
            trusted = dataclasses.replace(context, trust=Trust.TRUSTED)
            carried, result = _carry_out(settings, trusted, services, commands, Path(scratch))
            answers += carried
    answers += _unhandled(context, commands)
    return _answer(context, services, github, answers, result)


def _unhandled(context: RunContext, commands: Commands) -> list[Answer]:
    """``review`` where it is not run, and commands past the limit: said, never dropped."""
    notes: list[Answer] = []
    if commands.asks_review:
        why = (
            "`review` reviews pull requests; this is an issue."
            if context.pull_request is None
            else "A review runs when `review` is asked in a comment of its own."
        )
        notes.append(Answer(verb=Verb.REVIEW, text=why, done=False))
    if commands.left_over:
        more = f"{commands.left_over} more command(s) were not read: ask again."
        notes.append(Answer(verb=replies.LEFT_OVER, text=more, done=False))
    return notes


# --- carrying the commands out ------------------------------------------------------------------


def _carry_out(
    settings: Settings,
    context: RunContext,
    services: Services,
    commands: Commands,
    scratch: Path,
) -> tuple[list[Answer], RunResult]:
    scope = compute_scope(settings, context)
    landing, reason = _landing(settings, context, scope)
    if landing is Landing.COMMITTED and uses_git(settings):
        # Committed saves go to git, which the cache's own limits do not govern.
        services = dataclasses.replace(services, store_write_note="")
    plans = _Plans(
        settings=settings,
        context=context,
        services=services,
        scope=scope,
        scratch=scratch,
        landing=landing,
    )
    if landing is Landing.STICKY:
        return _on_pull_request(plans.next(), commands)
    return _one_by_one(plans, commands, reason)


@dataclass(kw_only=True)
class _Plans:
    """A plan for every command (its own scratch folder and, for git, its own save key)."""

    settings: Settings
    context: RunContext
    services: Services
    scope: MemoryScope
    scratch: Path
    landing: Landing
    made: int = 0

    def next(self) -> Plan:
        from memory_action.memory.sources import MemoryFiles  # noqa: PLC0415

        self.made += 1
        scratch = self.scratch / f"command-{self.made}"
        scratch.mkdir(parents=True)
        scope = self.scope
        if self.landing is Landing.COMMITTED and uses_git(self.settings):
            scope = committed_only(scope, self.context)
        masked = self.services.workflow.masked_values
        files = MemoryFiles.from_settings(self.settings, self.context.workspace, masked)
        mode = self.settings.mode
        return Plan(
            settings=self.settings,
            context=self.context,
            services=self.services,
            mode=mode,
            scope=scope,
            files=files,
            scratch=scratch,
        )


def _one_by_one(plans: _Plans, commands: Commands, reason: str) -> tuple[list[Answer], RunResult]:
    """Each command on the memory as the one before left it: one save (commit) each."""
    answers: list[Answer] = []
    result = RunResult.untouched()
    for command in commands.for_memory:
        plan = plans.next()
        start = restore(plan)
        result = dataclasses.replace(
            result, memory_hit=start.restored.hit, memory_key=start.restored.matched_key or ""
        )
        if start.unread:
            answers.append(_unread(command, start))
            continue
        if command.verb is Verb.MEMORY:
            answers.append(_listing(plan, start, start.text))
            continue
        after, answer = _apply(plan, command, start.text)
        if after == start.text or plans.landing is Landing.NOWHERE:
            answers.append(answer if after == start.text else _nowhere(answer, reason))
            continue
        saved = _save(plan, start, after)
        answers.append(answer if saved.saved else _not_saved(answer, saved))
        if saved.saved:
            result = dataclasses.replace(result, saved_key=saved.key, memory_changed=True)
    return answers, result


def _on_pull_request(plan: Plan, commands: Commands) -> tuple[list[Answer], RunResult]:
    """Every command on the pull request's memory, then the proposal published once."""
    start = restore(plan)
    result = RunResult(
        memory_hit=start.restored.hit,
        memory_key=start.restored.matched_key or "",
        saved_key="",
        memory_changed=False,
        comment_url="",
        response="",
    )
    if start.unread:
        return [_unread(command, start) for command in commands.for_memory], result
    text = start.text
    answers: list[tuple[Answer, bool]] = []  # and whether it waits for the comment
    notes: list[str] = []  # what happens to each change, said truthfully
    for command in commands.for_memory:
        if command.verb is Verb.MEMORY:
            answers.append((_listing(plan, start, text), False))
            notes.append("")
            continue
        after, answer = _apply(plan, command, text)
        answers.append((answer, after != text))
        notes.append(_pending(command.verb, text, after, start.committed.text))
        text = after
    if text == start.text:
        return [answer for answer, _ in answers], result
    from memory_action.commands.proposal_comment import publish_proposal  # noqa: PLC0415

    problem = publish_proposal(plan, _outcome(plan, start, text))
    final = [
        answer
        if not waits
        else Answer(verb=answer.verb, text=f"{answer.text} {note}", done=True)
        if not problem
        else Answer(verb=answer.verb, text=f"Not kept: {problem}.", done=False)
        for (answer, waits), note in zip(answers, notes, strict=True)
    ]
    return final, dataclasses.replace(result, memory_changed=not problem)


def _pending(verb: Verb, before: str, after: str, committed: str) -> str:
    """What becomes of a command's change on a pull request, whose memory is a proposal."""
    if verb is not Verb.FORGET:
        return "It becomes memory when this pull request is merged (untick it to veto)."
    kept = set(after.splitlines())
    gone = [line for line in before.splitlines() if line not in kept]
    if any(line in committed.splitlines() for line in gone):
        return (
            "Its removal from committed memory is proposed in the checklist: it is removed when "
            "this pull request is merged (untick it to keep the line)."
        )
    return (
        "It was only proposed by this pull request, so it is dropped from the proposal and "
        "will not become memory."
    )


def _unread(command: Command, start: StartingMemory) -> Answer:
    why = "; ".join(start.unread)
    return Answer(
        verb=command.verb,
        text=f"Memory could not be read ({why}); nothing was changed.",
        done=False,
    )


def _listing(plan: Plan, start: StartingMemory, text: str) -> Answer:
    return Answer(
        verb=Verb.MEMORY,
        text=replies.listing(text, start.provenance, plan.scope.description, plan.masked),
        done=True,
    )


def _landing(settings: Settings, context: RunContext, scope: MemoryScope) -> tuple[Landing, str]:
    """Where this run's memory changes land, and why nowhere."""
    pr = context.pull_request
    if scope.committed_prefix is None:
        return Landing.NOWHERE, "`memory_scope: pr` keeps memory only for pull requests"
    if uses_git(settings) or (scope.may_write and scope.layer is Layer.COMMITTED):
        return Landing.COMMITTED, ""
    if pr is not None and scope.kind is not ScopeKind.PR and settings.post_comment:
        return Landing.STICKY, ""
    if pr is not None and scope.kind is not ScopeKind.PR:
        return Landing.NOWHERE, "`post_comment: false` leaves no comment to propose it in"
    if pr is None:
        return Landing.NOWHERE, (
            "memory lives in the Actions cache, and a comment on an issue gets a read-only "
            "cache token"
        )
    return Landing.NOWHERE, scope.write_note or "this run may not write memory"


def _apply(plan: Plan, command: Command, text: str) -> tuple[str, Answer]:
    """``text`` after ``command`` (unchanged when refused or already so), and the answer."""
    if not command.argument:
        what = "the text to remember" if command.verb is Verb.REMEMBER else "what to forget"
        agent = plan.settings.agent_name
        usage = f"`@{agent} {command.verb.value} <text>` needs {what}."
        return text, Answer(verb=command.verb, text=usage, done=False)
    if command.verb is Verb.REMEMBER:
        return _remember(plan, text, command.argument)
    return _forget(plan, text, command.argument)


def _remember(plan: Plan, text: str, wanted: str) -> tuple[str, Answer]:
    verb = Verb.REMEMBER
    if len(wanted) > items.MAX_ITEM_CHARS:
        limit = f"at most {items.MAX_ITEM_CHARS:,} characters"
        return text, Answer(
            verb=verb, text=f"Not remembered: an item is one line of {limit}.", done=False
        )
    line = items.as_item_line(wanted)
    findings = find_secrets(line, plan.masked)
    if findings:
        plan.refusals.record("remember", findings)
        refusal = (
            f"Not remembered: the text looks like it holds {describe(findings)}, and memory "
            "never holds secrets. Write the rule without the value."
        )
        return text, Answer(verb=verb, text=refusal, done=False)
    if items.holds(text, line):
        return text, Answer(verb=verb, text=f"I already remember {replies.shown(line)}.", done=True)
    after = items.with_item(text, line)
    size, budget = len(after.encode()), plan.settings.max_memory_bytes
    if size > budget:
        refusal = (
            f"Not remembered: memory would be {size:,} bytes, over `max_memory_kb: "
            f"{plan.settings.max_memory_kb}`. Forget something first."
        )
        return text, Answer(verb=verb, text=refusal, done=False)
    return after, Answer(verb=verb, text=f"Remembered {replies.shown(line)}.", done=True)


def _forget(plan: Plan, text: str, wanted: str) -> tuple[str, Answer]:
    found = items.find(text, wanted)
    if found.item is not None:
        forgot = f"Forgot {replies.shown(found.item.text)}."
        return items.without(text, found.item), Answer(verb=Verb.FORGET, text=forgot, done=True)
    agent = plan.settings.agent_name
    if found.candidates:
        listed = replies.candidates(wanted, found.candidates, text, agent, plan.masked)
        return text, Answer(verb=Verb.FORGET, text=listed, done=False)
    missing = (
        f"Nothing in memory matches {replies.shown(wanted, plan.masked)}; "
        f"`@{agent} memory` lists what I remember."
    )
    return text, Answer(verb=Verb.FORGET, text=missing, done=False)


def _nowhere(answer: Answer, reason: str) -> Answer:
    return Answer(verb=answer.verb, text=replies.cannot_keep(reason), done=False)


def _not_saved(answer: Answer, saved: SaveResult) -> Answer:
    return Answer(
        verb=answer.verb, text=f"Not kept: memory was not saved ({saved.reason}).", done=False
    )


def _save(plan: Plan, start: StartingMemory, after: str) -> SaveResult:
    from memory_action.lifecycle.saving import save  # noqa: PLC0415

    stamp = stamp_for_run(plan.context, plan.services.clock())
    return save(plan, start, after, update(start.provenance, start.text, after, stamp))


def _outcome(plan: Plan, start: StartingMemory, after: str) -> Outcome:
    stamp = stamp_for_run(plan.context, plan.services.clock())
    provenance = update(start.provenance, start.text, after, stamp)
    before, path = start.text, plan.settings.memory_path.as_posix()
    diff = memory_diff({"AGENTS.md": before} if before else {}, {"AGENTS.md": after}, path)
    reason = "a comment command changes a pull request's memory through its comment"
    saved = SaveResult(saved=False, key="", reason=reason)
    return Outcome(
        start=start,
        sources=[],
        answer="",
        final=after,
        memory_diff=diff,
        saved=saved,
        stamp=stamp,
        provenance=provenance,
    )


# --- answering ----------------------------------------------------------------------------------


def _answer(
    context: RunContext,
    services: Services,
    github: GitHubAccess,
    answers: list[Answer],
    result: RunResult,
) -> RunResult:
    log = services.workflow
    body = gate(replies.reply_body(answers), log.masked_values)
    log.info(f"Comment commands: {len(answers)} answered without a model call.")
    review_comment = context.event_name == REVIEW_COMMENT
    done = all(answer.done for answer in answers)
    url = ""
    if context.comment_id is not None:
        try:
            reaction: ReactionContent = "+1" if done else "eyes"
            github.react(context.comment_id, reaction, review_comment=review_comment)
        except (GitHubError, CommentPermissionError) as exc:
            log.warning(f"Could not react to the comment: {exc}")
    number = context.pull_request.number if context.pull_request else context.issue_number
    if number is not None:
        # GitHub takes replies to a thread's first comment: the agent's, that was replied to.
        thread = context.reply_to if review_comment else None
        try:
            url = github.reply(number, body, in_thread_of=thread)
        except (GitHubError, CommentPermissionError) as exc:
            log.warning(f"Could not reply to the comment (the answer is in the job summary): {exc}")
    summary = gate(f"### memory-agent: comment commands\n\n{body.text}\n", log.masked_values)
    if not log.append_summary(summary):
        log.debug("No job summary file; summary not written.")
    return dataclasses.replace(result, comment_url=url, response=body.text)
