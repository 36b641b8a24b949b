"""The calls each kind of run makes, counted: GitHub REST, GitHub GraphQL, cache service lookups
and blob downloads.

One repository's life, each run in-process with the Actions cache store against the fake cache
service and the fake GitHub API: a push to main saves committed memory; a pull request of
``files`` changed files is opened and reviewed, then synchronized; a writer's ``remember`` and
``forget`` comment commands; the merge's push promotes the proposal. ``bench/startup.py`` prints
these figures and ``tests/integration/test_calls_per_run.py`` holds them to their targets.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import BLOB_GET, LOOKUP, FakeCacheService
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file
from tests.fakes.runner import CacheRunner, RunOutcome, pull_request_event, push_event
from tests.fakes.scripted_model import ScriptedChatModel, tool_call

MEMORY = ".agent-memory/AGENTS.md"
MAIN, PR_REF = "refs/heads/main", "refs/pull/7/merge"
LESSON = "# Conventions\n\n- Network calls retry with tenacity.\n"
PR_LESSON = LESSON + "- The fetcher's retry budget is 3 attempts.\n"
MERGE_SHA = "c" * 40
REST_TARGET = 8  # issue 18: at most 8 REST calls for a pull request run of up to 100 files
KINDS = ("push", "pull request", "synchronize", "comment: remember", "comment: forget", "promotion")
TARGETS = dict.fromkeys(KINDS, REST_TARGET)  # and no other kind of run makes more


@dataclass(frozen=True)
class RunCalls:
    kind: str
    exit_code: int
    rest: int
    graphql: int
    cache_lookups: int
    downloads: int
    rest_calls: tuple[str, ...]  # "GET /pulls/7", in order

    @property
    def target(self) -> int | None:
        return TARGETS.get(self.kind)


def patch_of(index: int) -> str:
    return f"@@ -1,2 +1,3 @@\n def f{index}():\n+    retry()\n     return {index}\n"


def comment_event(body: str) -> dict[str, Any]:
    return {
        "action": "created",
        "issue": {"number": 7, "pull_request": {"url": "x"}, "user": {"login": "mona"}},
        "comment": {
            "id": 5_001,
            "body": body,
            "author_association": "MEMBER",
            "user": {"login": "mona", "type": "User"},
        },
        "repository": {"full_name": "octo-org/octo-repo", "default_branch": "main"},
    }


def count_runs(files: int = 100) -> list[RunCalls]:
    """Every kind of run once, in a repository's order of life; the calls of each."""
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        service = stack.enter_context(FakeCacheService([MAIN]))
        github = FakeGitHub()
        changed = [changed_file(f"src/m{i}.py", patch_of(i)) for i in range(files)]
        github.add_pull(FakePullRequest(files=changed))
        stack.enter_context(github.serve())
        stack.enter_context(default_tuning(fast_tuning([])))
        runner = CacheRunner(work, extra_env=service.env())
        pr_token = service.add_run([PR_REF, MAIN])
        return list(_runs(runner, service, github, pr_token))


def _runs(
    runner: CacheRunner, service: FakeCacheService, github: FakeGitHub, pr_token: str
) -> Iterator[RunCalls]:
    def run(
        kind: str, token: str, trigger: tuple[str, dict[str, Any], str], *script: Any
    ) -> RunCalls:
        github.calls.clear()
        before = len(service.requests)
        runner.extra_env["ACTIONS_RUNTIME_TOKEN"] = token
        outcome: RunOutcome = runner.run(*trigger, ScriptedChatModel.from_script(*script))
        github.workflow_runs.append(runner.run_id)  # GitHub now lists it
        rest = [(m, u) for m, u in github.calls if not u.split("?")[0].endswith("/graphql")]
        routes = [request.route for request in service.requests[before:]]
        return RunCalls(
            kind=kind,
            exit_code=outcome.exit_code,
            rest=len(rest),
            graphql=len(github.calls) - len(rest),
            cache_lookups=routes.count(LOOKUP),
            downloads=routes.count(BLOB_GET),
            rest_calls=tuple(f"{m} {u.split('/octo-repo', 1)[-1]}" for m, u in rest),
        )

    write = tool_call("write_file", {"file_path": MEMORY, "content": LESSON})
    yield run("push", service.token, ("push", push_event(), MAIN), write, "Consolidated.")
    learn = tool_call("write_file", {"file_path": MEMORY, "content": PR_LESSON})
    opened = ("pull_request", pull_request_event(), PR_REF)
    yield run("pull request", pr_token, opened, learn, "The loop returns early.")
    synchronized = ("pull_request", pull_request_event(action="synchronize"), PR_REF)
    yield run("synchronize", pr_token, synchronized, "Still returns early.")
    for verb, text in (("remember", "Logs go through structlog."), ("forget", "structlog")):
        event = comment_event(f"@memory-agent {verb} {text}")
        yield run(f"comment: {verb}", service.token, ("issue_comment", event, MAIN))
    github.merge(7, MERGE_SHA)
    promotion = ("push", push_event(MERGE_SHA), MAIN)
    yield run("promotion", service.token, promotion, "Nothing to consolidate.")
