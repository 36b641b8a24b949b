"""The GitHub Models free-tier stub: its limits, its answers, and the diligent reviewer's policy."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.click_corpus import ClickCorpus
from tests.fakes.diligent_reviewer import TOKENS_PER_FILE, Answer, DiligentReviewer, ToolCall
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_models_stub import Fault, FreeTier, GitHubModelsStub, estimate_tokens
from tests.fakes.runner import ActionRunner, pull_request_event

TOOLS = ("list_changed_files", "get_file_patch", "read_file", "edit_file", "write_file")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def request(*messages: dict[str, Any], tools: tuple[str, ...] = TOOLS) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "openai/gpt-4.1-mini", "messages": list(messages)}
    if tools:
        body["tools"] = [tool(name) for name in tools]
    return body


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def called(name: str, call_id: str, **args: str) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "function": function}],
    }


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def post(stub: GitHubModelsStub, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    data = json.dumps(body).encode()
    sent = urllib.request.Request(
        f"{stub.base_url}/chat/completions", data, {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(sent, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, json.load(error)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stub(clock: Clock) -> Iterator[GitHubModelsStub]:
    limits = FreeTier(max_input_tokens=400, per_minute=3, per_day=5)
    with GitHubModelsStub(["src/a.py", "src/b.py"], limits=limits, clock=clock) as stub:
        yield stub


SMALL = request(user("### modified src/a.py (+1 -0)\n### added src/b.py (+2 -0)\n"))


# -- limits ------------------------------------------------------------------------------------


def test_a_request_over_the_input_limit_gets_github_models_413(stub: GitHubModelsStub) -> None:
    big = request(user("x" * 2000))
    status, _headers, body = post(stub, big)

    assert status == 413
    assert body["error"]["code"] == "tokens_limit_reached"
    assert body["error"]["message"] == (
        "Request body too large for gpt-4.1-mini model. Max size: 400 tokens."
    )
    assert [(r.tokens, r.status, r.limit) for r in stub.requests] == [
        (estimate_tokens(big), 413, "tokens")
    ]


def test_the_default_limit_is_the_free_tier_8000_tokens() -> None:
    with GitHubModelsStub(["a.py"]) as stub:
        status, _headers, body = post(stub, request(user("y" * 33_000)))
    assert status == 413
    assert "Max size: 8000 tokens." in body["error"]["message"]


def test_usage_is_the_stubs_estimate_of_the_request(stub: GitHubModelsStub) -> None:
    status, _headers, body = post(stub, SMALL)

    size = len(json.dumps(SMALL["messages"])) + len(json.dumps(SMALL["tools"]))
    assert status == 200
    assert body["usage"]["prompt_tokens"] == math.ceil(size / 4) == stub.requests[0].tokens
    answer = body["choices"][0]["message"]["content"]
    assert body["usage"]["completion_tokens"] >= len(answer) / 4
    assert stub.requests[0].seen == {"src/a.py", "src/b.py"}


def test_past_the_minute_limit_429_says_how_long_to_wait(
    stub: GitHubModelsStub, clock: Clock
) -> None:
    for _ in range(3):
        clock.now += 10
        assert post(stub, SMALL)[0] == 200
    status, headers, body = post(stub, SMALL)

    assert status == 429
    assert headers["x-ratelimit-type"] == "UserByModelByMinute"
    assert headers["retry-after"] == "40"  # the first of the three leaves the minute then
    assert body["error"]["code"] == "RateLimitReached"
    clock.now += 40
    assert post(stub, SMALL)[0] == 200


def test_past_the_daily_limit_429_names_the_day(stub: GitHubModelsStub, clock: Clock) -> None:
    for _ in range(5):
        clock.now += 61
        assert post(stub, SMALL)[0] == 200
    clock.now += 61
    status, headers, body = post(stub, SMALL)

    assert status == 429
    assert headers["x-ratelimit-type"] == "UserByModelByDay"
    wait = int(headers["retry-after"])
    assert 86_000 < wait < 86_400
    assert body["error"]["message"] == (
        f"Rate limit of 5 per 86400s exceeded for UserByModelByDay. "
        f"Please wait {wait} seconds before retrying."
    )


def test_injected_answers_come_first_then_requests_pass(stub: GitHubModelsStub) -> None:
    stub.inject(Fault("tokens"), Fault("minute", retry_after=7), Fault("day", retry_after=999))

    answers = [post(stub, SMALL) for _ in range(4)]

    assert [status for status, _h, _b in answers] == [413, 429, 429, 200]
    assert answers[1][1]["retry-after"] == "7"
    assert answers[1][1]["x-ratelimit-type"] == "UserByModelByMinute"
    assert answers[2][1]["x-ratelimit-type"] == "UserByModelByDay"
    assert [r.limit for r in stub.requests] == ["tokens", "minute", "day", ""]


# -- the diligent reviewer --------------------------------------------------------------------

REVIEWER = DiligentReviewer(["src/a.py", "src/b.py", "docs/c.md"])


def test_a_batch_naming_the_other_files_is_answered_at_once() -> None:
    batch = user(
        "### modified src/a.py (+1 -0)\n@@ -1 +1,2 @@\n x\n+y\n"
        "Reviewed in other requests (do not read them): src/b.py, docs/c.md"
    )
    decision = REVIEWER.decide(request(batch, tools=("read_file", "get_file_patch")))

    assert isinstance(decision, Answer)
    assert "`src/a.py`" in decision.text
    assert "`src/b.py`" not in decision.text
    assert abs(len(decision.text) / 4 - TOKENS_PER_FILE) < 10


def test_an_unseen_file_is_asked_for_with_the_offered_tool() -> None:
    batch = user("### modified src/a.py (+1 -0)\nReviewed in other requests: src/b.py")

    both = request(batch, tools=("read_file", "get_file_patch"))
    assert REVIEWER.decide(both) == ToolCall("get_file_patch", {"path": "docs/c.md"})
    only_read = request(batch, tools=("read_file",))
    assert REVIEWER.decide(only_read) == ToolCall("read_file", {"path": "docs/c.md"})
    assert isinstance(REVIEWER.decide(request(batch, tools=())), Answer)


def test_todays_engine_lists_the_files_then_reads_each_patch() -> None:
    task = user("Review pull request #7.")
    assert REVIEWER.decide(request(task)) == ToolCall("list_changed_files", {})

    listed = [task, called("list_changed_files", "c1"), result("c1", "3 changed files")]
    assert REVIEWER.decide(request(*listed)) == ToolCall("get_file_patch", {"path": "src/a.py"})

    patches = [
        called("get_file_patch", "c2", path="src/a.py"),
        result("c2", "modified src/a.py (+1 -0)\n@@ -1 +1,2 @@"),
        called("read_file", "c3", path="src/b.py"),
        result("c3", "def b(): ..."),
        called("get_file_patch", "c4", path="docs/c.md"),
        result("c4", "Error: 'docs/c.md' is not a changed file"),
    ]
    body = request(*listed, *patches)
    assert REVIEWER.read(body).seen == {"src/a.py", "src/b.py"}
    assert REVIEWER.decide(body) == ToolCall("get_file_patch", {"path": "docs/c.md"})


def test_the_synthesis_request_counts_the_parts_findings_as_reviewed() -> None:
    synthesis = user(
        "Write the review from the findings.\n## Findings of part 1 of 2\n- `src/a.py`: ok\n"
        "- `src/b.py`: ok\n## Findings of part 2 of 2\n- `docs/c.md`: ok\n"
    )
    decision = REVIEWER.decide(request(synthesis))

    assert isinstance(decision, Answer)
    assert "`docs/c.md`" in decision.text


def test_no_tool_is_called_after_the_models_own_turn() -> None:
    body = request(user("Review."), {"role": "assistant", "content": "Done."})
    assert isinstance(REVIEWER.decide(body), Answer)


# -- a real pull request, the whole action --------------------------------------------------


def test_the_action_reviews_a_small_real_pull_request_within_the_limits(
    click_corpus: ClickCorpus, tmp_path: Path
) -> None:
    pull = click_corpus.pulls[0]  # 3 files
    github = FakeGitHub()
    github.add_pull(pull.fake())
    with github.serve(), GitHubModelsStub(pull.paths) as stub:
        runner = ActionRunner(tmp_path, inputs={"model_base_url": stub.base_url})
        event = pull_request_event(pull.number, head_sha=pull.head_sha, base_sha=pull.base_sha)
        outcome = runner.run("pull_request", event, f"refs/pull/{pull.number}/merge")

    assert outcome.exit_code == 0, outcome.stdout
    assert all(r.status == 200 and r.tokens <= 8000 for r in stub.requests)
    assert set().union(*(r.seen for r in stub.requests)) == set(pull.paths)
    [comment] = github.bodies(pull.number)
    assert all(f"`{path}`" in comment for path in pull.paths)
