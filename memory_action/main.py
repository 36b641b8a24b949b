"""The composition root: builds the real clients and turns expected failures into exit codes.

This is the only module that knows every concrete class. A ``RunEnding`` becomes an
``::error::`` line (or a notice) and an exit code here, in the words ``errors.exit_for`` gives it
(see ``memory_action.errors`` for the codes).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from memory_action.errors import RunEnding, UnsupportedEvent, exit_for
from memory_action.gha import Workflow
from memory_action.run.context import PR_EVENTS, RunContext, load_context, read_event, settle_trust
from memory_action.run.settings import Settings, check_credentials, parse_settings
from memory_action.safety.scrub import scan_once

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_action.github.client import GitHubClient
    from memory_action.model.profile import ServedWindow
    from memory_action.pipeline import Services
    from memory_action.publish.outcome import RunResult


def main(
    env: Mapping[str, str] | None = None,
    *,
    build_model: Callable[[], BaseChatModel] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    timer: Callable[[], float] = time.monotonic,
) -> int:
    """Run the action from ``INPUT_*`` and ``GITHUB_*``; returns the process exit code.

    ``build_model`` replaces the model the inputs name (tests pass a scripted model); ``sleep``
    is how the run waits out a provider's short rate limit (tests record the waits instead);
    ``timer`` is the clock ``timeout_minutes`` is measured on (tests move it).
    """
    env = os.environ if env is None else env
    workflow = Workflow(env)
    try:
        return _run_action(env, workflow, build_model, sleep, timer)
    except RunEnding as ending:
        told = exit_for(ending)  # settings named as inputs
        if not told.failed:
            workflow.notice(told.message)
            return told.code
        workflow.error(told.message, title="memory-agent")
        from memory_action.safety.outgoing import gate  # noqa: PLC0415 - only on the error path

        failed = gate(f"### memory-agent failed\n\n{told.message}\n", workflow.masked_values)
        workflow.append_summary(failed)
        return told.code


def _run_action(
    env: Mapping[str, str],
    workflow: Workflow,
    build_model: Callable[[], BaseChatModel] | None,
    sleep: Callable[[float], None],
    timer: Callable[[], float],
) -> int:
    settings = parse_settings(env)  # bad input is refused before anything else is done
    mask_secrets(settings, workflow)
    event = read_event(env.get("GITHUB_EVENT_PATH"))
    context = load_context(env, event)
    # Only a run that will use the model asks its server for the window (an unhandled event
    # sends no request).
    settings = parse_settings(env, ask_server=ask_server)
    check_credentials(settings, env)  # after load_context: an unhandled event needs none
    from memory_action.github.client import pull_request_from_event  # noqa: PLC0415

    github = github_client(
        settings.github_token.reveal(), context.api_url, context.repository, warn=workflow.warning
    )
    if context.pull_request is not None and context.event_name in PR_EVENTS:
        known = pull_request_from_event(event)  # one API read fewer (issue 18)
        if known is not None:
            github.pull_request(context.pull_request.number).known_from_event(known)
    # The payload cannot say who may write or whether a commented pull request is a fork.
    context = settle_trust(context, github)
    pr, reply_to = context.pull_request, context.reply_to
    if (
        reply_to is not None
        and pr is not None
        and not github.wrote_review_comment(pr.number, reply_to)
    ):
        raise UnsupportedEvent("a reply to a review comment the agent did not write")
    from memory_action.store_wiring import allow_git_writes  # noqa: PLC0415

    context = allow_git_writes(settings, context)
    services = build_services(settings, context, env, workflow, build_model, github=github)
    services = dataclasses.replace(services, sleep=sleep, timer=timer)
    result = _route(settings, context, services)
    from memory_action.safety.outgoing import Form, gate  # noqa: PLC0415 - see the pipeline

    for name, value in result.outputs().items():
        # The response is Markdown a workflow may post; the others are values machines read.
        form = Form.MARKDOWN if name == "response" else Form.TEXT
        workflow.set_output(name, gate(value, workflow.masked_values, form=form))
    return 0


def _route(settings: Settings, context: RunContext, services: Services) -> RunResult:
    """A comment's commands go to their own flow (``commands.route``), every other run to the
    review or maintenance flow (``pipeline``); both restore and save through ``lifecycle``."""
    from memory_action import pipeline  # noqa: PLC0415 - keep unhandled events fast
    from memory_action.commands.route import route  # noqa: PLC0415 - keep unhandled events fast

    # Memory is read many times a run: scanned once, whichever flow runs.
    with scan_once():
        answered = route(settings, context, services)
        return answered if answered is not None else pipeline.run(settings, context, services)


def github_client(
    token: str,
    api_url: str,
    repository: str,
    *,
    warn: Callable[[str], None] = lambda _line: None,
) -> GitHubClient:
    """The run's one GitHub client: every part of the run that talks to GitHub gets this one
    (the action's run, and each ``memory-agent`` command that reads a repository); ``warn``
    hears of a failed look-up that decides trust."""
    from memory_action.github.client import GitHubClient  # noqa: PLC0415 - PyGithub loads slowly

    return GitHubClient(token, api_url, repository, warn=warn)


def mask_secrets(settings: Settings, workflow: Workflow) -> None:
    for secret in (settings.github_token, settings.model_api_key):
        if secret:
            workflow.add_mask(secret.reveal())


def build_services(
    settings: Settings,
    context: RunContext,
    env: Mapping[str, str],
    workflow: Workflow,
    build_model: Callable[[], BaseChatModel] | None = None,
    *,
    github: GitHubClient | None = None,
) -> Services:
    from memory_action import pipeline  # noqa: PLC0415
    from memory_action.agent.progress_line import ProgressLine  # noqa: PLC0415
    from memory_action.store_wiring import actions_store  # noqa: PLC0415

    if github is None:
        github = github_client(
            settings.github_token.reveal(),
            context.api_url,
            context.repository,
            warn=workflow.warning,
        )
    choice = actions_store(settings, context, env, workflow, github)
    return pipeline.Services(
        workflow=workflow,
        store=choice.store,
        store_note=choice.note,
        store_write_note=choice.write_note,
        layer_admin=choice.layer_admin,
        github=github,
        model_factory=build_model or model_factory(settings, env),
        progress=ProgressLine(workflow.out, live=False),  # the log: one line per model request
    )


def model_factory(settings: Settings, env: Mapping[str, str]) -> Callable[[], BaseChatModel]:
    def build() -> BaseChatModel:
        from memory_action.agent.models import build_chat_model  # noqa: PLC0415

        # The review engine waits out short 429s itself and must stop at once on a daily quota,
        # which the SDK's own retries would spend the run on.
        return build_chat_model(
            settings,
            settings.github_token,
            timeout_s=settings.request_timeout_s,
            max_retries=0,
            env=env,
        )

    return build


def ask_server(model: str, base_url: str, api_key: str) -> ServedWindow | None:
    """The window an OpenAI-compatible server says its model has (``review.server_window``)."""
    from memory_action.model.server_window import served_window  # noqa: PLC0415 - httpx

    return served_window(model, base_url, api_key)
