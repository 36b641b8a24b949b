"""``overlay_from_comment``: a run that cannot read a pull request's cache scope starts from the
memory the pull request's sticky comment proposes, and only from its ticked items."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from memory_action.gha import Workflow
from memory_action.github.after_merge import StickyComment, WorkflowRun
from memory_action.lifecycle.layers import Fetched
from memory_action.lifecycle.promotion import overlay_from_comment
from memory_action.memory.markers import comment_marker
from memory_action.memory.proposals import (
    build_proposal,
    decode_block,
    render_proposal,
)
from memory_action.memory.sources import MemoryFiles
from memory_action.memory.state import EntryState
from memory_action.pipeline import GitHubAccess, Plan, Services, resolve_mode
from memory_action.publish.report import render_comment
from memory_action.run.context import load_context
from memory_action.run.scope import compute_scope
from memory_action.run.settings import ScopeKind, Settings

EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events"
AGENT = "memory-agent"
BASE = "# Tests\n\n- Use pytest.\n\n# Network\n\n- Use httpx.\n"
FACT_TESTS = "- Fixtures live in tests/conftest.py.\n"
FACT_NETWORK = "- Network calls retry with tenacity.\n"
LEARNED = BASE.replace("- Use pytest.\n", f"- Use pytest.\n{FACT_TESTS}").replace(
    "- Use httpx.\n", f"- Use httpx.\n{FACT_NETWORK}"
)
WHEN = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
WORKFLOW_PATH = ".github/workflows/review.yml"


@dataclass
class CommentsOnly:
    """GitHub as ``overlay_from_comment`` sees it: the sticky comment of each pull request."""

    bodies: dict[int, str] = field(default_factory=dict)
    asked: list[tuple[int, str]] = field(default_factory=list)

    def sticky_comment(self, pr_number: int, marker: str) -> StickyComment | None:
        self.asked.append((pr_number, marker))
        body = self.bodies.get(pr_number)
        if body is None:
            return None
        return StickyComment(
            id=1,
            node_id="IC_1",
            body=body,
            author_login="github-actions[bot]",
            created_at=WHEN,
            updated_at=WHEN,
        )

    def workflow_run(self, run_id: int) -> WorkflowRun:
        """Every run a block names is a run of this workflow (``promotion`` checks it)."""
        return WorkflowRun(id=run_id, repository="octo-org/octo-repo", path=WORKFLOW_PATH)

    def look_up_workflow_runs(self, run_ids: Sequence[int], workflow_path: str) -> None:
        """Nothing to ask ahead: ``workflow_run`` answers every run."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"overlay_from_comment must not call GitHub's {name}")


def event(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return data


TRIGGERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "issue_comment": ("issue_comment", "refs/heads/main", event("issue_comment_pr_collaborator")),
    "issue_comment/non-collaborator": (
        "issue_comment",
        "refs/heads/main",
        {
            **event("issue_comment_pr_collaborator"),
            "comment": {
                **event("issue_comment_pr_collaborator")["comment"],
                "author_association": "NONE",
            },
        },
    ),
    "pull_request_target": (
        "pull_request_target",
        "refs/heads/main",
        event("pull_request_target_fork"),
    ),
    "pull_request": ("pull_request", "refs/pull/42/merge", event("pull_request_opened_same_repo")),
    "push": ("push", "refs/heads/main", event("push_main")),
}


def plan_for(
    tmp_path: Path,
    trigger: str,
    github: CommentsOnly | None,
    settings: Settings | None = None,
) -> Plan:
    settings = settings or Settings()
    event_name, ref, payload = TRIGGERS[trigger]
    env = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REF": ref,
        "GITHUB_REPOSITORY": "octo-org/octo-repo",
        "GITHUB_RUN_ID": "5000",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_SHA": "9f1c2d3e4b5a69788766554433221100ffeeddcc",
        "GITHUB_ACTOR": "hubot",
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_WORKFLOW_REF": f"octo-org/octo-repo/{WORKFLOW_PATH}@refs/heads/main",
    }
    context = load_context(env, payload)

    def no_model() -> Any:
        raise AssertionError("no model in these tests")

    services = Services(
        workflow=Workflow(env={}, out=io.StringIO()),
        store=None,
        store_note="no store in these tests",
        github=cast(GitHubAccess, github),
        model_factory=no_model,
    )
    return Plan(
        settings=settings,
        context=context,
        services=services,
        mode=resolve_mode(settings, context),
        scope=compute_scope(settings, context),
        files=MemoryFiles.from_settings(settings, tmp_path / "workspace"),
        scratch=tmp_path / "scratch",
    )


def sticky_body(
    pr: int = 42,
    *,
    agent: str = AGENT,
    base: str = BASE,
    new: str = LEARNED,
    trusted: bool = True,
    marker_agent: str = AGENT,
) -> str:
    proposal = build_proposal(agent, pr, base, new, trusted=trusted, stamp={"run_id": "4000"})
    return render_comment(
        agent_name=marker_agent,
        review_markdown="Looks good.",
        memory_diff="",
        memory_note="Saved.",
        run_url=None,
        proposal_markdown=render_proposal(proposal),
    )


def set_tick(body: str, fact: str, *, ticked: bool) -> str:
    """Tick or untick the checklist line of ``fact``, as a person does in the browser."""
    words = fact.removeprefix("- ").split(" ")[0]
    lines = body.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if "<!-- memory-agent:item" in line and words in line:
            box = "- [x]" if ticked else "- [ ]"
            lines[number] = box + line[len(box) :]
            return "".join(lines)
    raise AssertionError(f"no item for {fact!r}")


# --- when it reads the comment ------------------------------------------------------------------


@pytest.mark.parametrize(
    "trigger", ["issue_comment", "issue_comment/non-collaborator", "pull_request_target"]
)
def test_a_run_that_cannot_read_the_cache_scope_starts_from_the_comment(
    tmp_path: Path, trigger: str
) -> None:
    pr = TRIGGERS[trigger][2].get("number") or 42
    github = CommentsOnly({pr: sticky_body(pr)})

    overlay = overlay_from_comment(plan_for(tmp_path, trigger, github))

    assert overlay is not None
    assert overlay.text == LEARNED
    assert overlay.state == EntryState(layer="overlay", base=BASE)
    assert overlay.result.hit is True
    assert overlay.key is None  # nothing stored: a save would be a first overlay entry
    assert overlay.provenance.records == {}
    assert github.asked == [(pr, comment_marker(AGENT))]


@pytest.mark.parametrize("trigger", ["pull_request", "push"])
def test_a_run_that_reads_its_own_cache_scope_does_not_ask_for_the_comment(
    tmp_path: Path, trigger: str
) -> None:
    github = CommentsOnly({42: sticky_body()})

    assert overlay_from_comment(plan_for(tmp_path, trigger, github)) is None
    assert github.asked == []


def test_pull_request_scope_has_no_overlay_to_read(tmp_path: Path) -> None:
    github = CommentsOnly({42: sticky_body()})
    settings = Settings(memory_scope=ScopeKind.PR)

    assert overlay_from_comment(plan_for(tmp_path, "issue_comment", github, settings)) is None
    assert github.asked == []


def test_without_github_access_there_is_no_comment(tmp_path: Path) -> None:
    assert overlay_from_comment(plan_for(tmp_path, "issue_comment", None)) is None


def test_branch_scope_reads_the_comment_too(tmp_path: Path) -> None:
    github = CommentsOnly({42: sticky_body()})
    settings = Settings(memory_scope=ScopeKind.BRANCH)

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github, settings))

    assert overlay is not None
    assert overlay.text == LEARNED


# --- only ticked items of our valid block for that pull request ---------------------------------


def test_only_ticked_items_are_applied(tmp_path: Path) -> None:
    body = set_tick(sticky_body(), FACT_TESTS, ticked=False)
    github = CommentsOnly({42: body})

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github))

    assert overlay is not None
    assert overlay.text == BASE.replace("- Use httpx.\n", f"- Use httpx.\n{FACT_NETWORK}")
    assert FACT_TESTS not in overlay.text


def test_with_every_item_unticked_the_overlay_is_the_base(tmp_path: Path) -> None:
    body = set_tick(set_tick(sticky_body(), FACT_TESTS, ticked=False), FACT_NETWORK, ticked=False)
    github = CommentsOnly({42: body})

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github))

    assert overlay is not None
    assert overlay.text == BASE


def test_items_of_an_untrusted_run_count_once_a_maintainer_ticks_them(tmp_path: Path) -> None:
    body = sticky_body(trusted=False)  # unticked by default
    github = CommentsOnly({42: body})
    plan = plan_for(tmp_path, "issue_comment", github)

    overlay = overlay_from_comment(plan)
    assert overlay is not None
    assert overlay.text == BASE

    github.bodies[42] = set_tick(body, FACT_NETWORK, ticked=True)
    overlay = overlay_from_comment(plan)
    assert overlay is not None
    assert FACT_NETWORK in overlay.text
    assert FACT_TESTS not in overlay.text


def test_a_second_line_with_an_items_marker_can_only_veto(tmp_path: Path) -> None:
    body = sticky_body()
    proposal = decode_block(body, AGENT)
    assert proposal is not None
    forged = "\n".join(f"- [ ] <!-- memory-agent:item {item.id} --> x" for item in proposal.items)
    github = CommentsOnly({42: f"{body}\n{forged}\n"})

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github))

    assert overlay is not None
    assert overlay.text == BASE


def block_of(body: str) -> str:
    start = body.index("<!-- memory-agent:proposal ")
    return body[start : body.index("-->", start) + 3]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("", id="empty comment"),
        pytest.param(
            render_comment(
                agent_name=AGENT,
                review_markdown="Looks good.",
                memory_diff="",
                memory_note="Not changed.",
                run_url=None,
            ),
            id="no proposal",
        ),
        pytest.param(sticky_body(41), id="a block for another pull request"),
        pytest.param(sticky_body(agent="other-agent"), id="another agent's block"),
        pytest.param(
            sticky_body(agent="memory-agent-2", marker_agent="memory-agent"),
            id="a block of an agent whose name starts with ours",
        ),
        pytest.param(
            sticky_body() + "\n" + block_of(sticky_body(new=BASE + "- Planted.\n")),
            id="two blocks",
        ),
        pytest.param(
            sticky_body().replace("<!-- memory-agent:proposal v1", "<!-- memory-agent:proposal v2"),
            id="an unknown version",
        ),
    ],
)
def test_anything_but_our_valid_block_for_that_pull_request_is_no_overlay(
    tmp_path: Path, body: str
) -> None:
    github = CommentsOnly({42: body})

    assert overlay_from_comment(plan_for(tmp_path, "issue_comment", github)) is None


def test_a_corrupted_block_is_no_overlay(tmp_path: Path) -> None:
    body = sticky_body()
    block = block_of(body)
    lines = block.splitlines()
    # Flip one character of the payload: the digest (or the decompression) catches it.
    middle = lines[1]
    flipped = middle[:10] + ("A" if middle[10] != "A" else "B") + middle[11:]
    github = CommentsOnly({42: body.replace(middle, flipped)})

    assert overlay_from_comment(plan_for(tmp_path, "issue_comment", github)) is None


def test_no_comment_is_no_overlay(tmp_path: Path) -> None:
    github = CommentsOnly({})

    assert overlay_from_comment(plan_for(tmp_path, "issue_comment", github)) is None
    assert github.asked == [(42, comment_marker(AGENT))]


def test_the_comment_of_a_custom_agent_name_is_asked_for_by_its_marker(tmp_path: Path) -> None:
    github = CommentsOnly({42: sticky_body(agent="reviewer", marker_agent="reviewer")})
    settings = replace(Settings(), agent_name="reviewer")

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github, settings))

    assert overlay is not None
    assert github.asked == [(42, comment_marker("reviewer"))]


def test_the_overlay_is_a_fetched_entry_restore_layers_can_use(tmp_path: Path) -> None:
    github = CommentsOnly({42: sticky_body()})

    overlay = overlay_from_comment(plan_for(tmp_path, "issue_comment", github))

    assert isinstance(overlay, Fetched)
    assert overlay.removed == ()
    assert overlay.secrets == ()
    assert overlay.holds() == frozenset()  # it holds no stored entry
