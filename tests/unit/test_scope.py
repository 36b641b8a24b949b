"""``compute_scope``: the keys a run restores and saves, its layer, and whether it may write.

One table covers every supported event x scope (pr | branch | repo) x fork case, with the exact
key strings; property tests then check the cache's key rules and that keys never cross agents,
scopes, branches or pull requests.
"""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from memory_action.memory.state import Layer
from memory_action.run.context import RunContext, settle_trust
from memory_action.run.context import load_context as parse_context
from memory_action.run.scope import MemoryScope, compute_scope, encode_part, new_nonce
from memory_action.run.settings import ScopeKind, Settings
from tests.fakes.trust import FakeTrustLookup


def load_context(env: dict[str, str], data: dict[str, Any]) -> RunContext:
    """The context as ``main()`` builds it: settled by a lookup where mona and hubot may write."""
    return settle_trust(parse_context(env, data), FakeTrustLookup())


EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events"
RUN_ID = "12345678901"
JOB = "review"
NONCE = "0a1b2c3d"
RUN = f"{RUN_ID}-1-{JOB}-{NONCE}"
BASE = "memory-agent/v1/memory-agent"

MAX_KEY_LENGTH = 512
MAX_KEYS = 10


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def env_for(event: str, ref: str, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_REF": ref,
        "GITHUB_REPOSITORY": "octo-org/octo-repo",
        "GITHUB_RUN_ID": RUN_ID,
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": JOB,
        "GITHUB_SHA": "9f1c2d3e4b5a69788766554433221100ffeeddcc",
        "GITHUB_ACTOR": "mona",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": "https://api.github.com",
        **extra,
    }


def same_repo(data: dict[str, Any]) -> dict[str, Any]:
    """The payload as if the pull request came from a branch of the repository itself."""
    data = copy.deepcopy(data)
    data["pull_request"]["head"]["repo"] = copy.deepcopy(data["repository"])
    data["pull_request"]["author_association"] = "MEMBER"
    return data


def with_base(data: dict[str, Any], base_ref: str) -> dict[str, Any]:
    data = copy.deepcopy(data)
    data["pull_request"]["base"]["ref"] = base_ref
    return data


CONTEXTS: dict[str, RunContext] = {
    "pull_request/same-repo": load_context(
        env_for("pull_request", "refs/pull/42/merge"), payload("pull_request_opened_same_repo")
    ),
    "pull_request/fork": load_context(
        env_for("pull_request", "refs/pull/57/merge"), payload("pull_request_synchronize_fork")
    ),
    "pull_request_target/same-repo": load_context(
        env_for("pull_request_target", "refs/heads/main"),
        same_repo(payload("pull_request_target_fork")),
    ),
    "pull_request_target/fork": load_context(
        env_for("pull_request_target", "refs/heads/main"), payload("pull_request_target_fork")
    ),
    "push/main": load_context(env_for("push", "refs/heads/main"), payload("push_main")),
    "push/feature": load_context(
        env_for("push", "refs/heads/feature/retry"), payload("push_feature_branch")
    ),
    "schedule/main": load_context(env_for("schedule", "refs/heads/main"), payload("schedule")),
    "workflow_dispatch/main": load_context(
        env_for("workflow_dispatch", "refs/heads/main"), payload("workflow_dispatch")
    ),
    "workflow_dispatch/feature": load_context(
        env_for("workflow_dispatch", "refs/heads/feature/retry"),
        {**payload("workflow_dispatch"), "ref": "refs/heads/feature/retry"},
    ),
    "issue_comment/collaborator": load_context(
        env_for("issue_comment", "refs/heads/main"), payload("issue_comment_pr_collaborator")
    ),
    "issue_comment/non-collaborator": load_context(
        env_for("issue_comment", "refs/heads/main"), payload("issue_comment_pr_non_collaborator")
    ),
}


def fixed_scope(the_settings: Settings, context: RunContext) -> MemoryScope:
    """``compute_scope`` with the nonce fixed, so keys can be compared exactly."""
    return compute_scope(the_settings, context, nonce=NONCE)


def settings(scope: str, **changes: Any) -> Settings:
    return Settings(memory_scope=ScopeKind(scope), **changes)


def scope_of(context: str, kind: str, **changes: Any) -> MemoryScope:
    return fixed_scope(settings(kind, **changes), CONTEXTS[context])


# -- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    restore: tuple[str, ...] | None  # primary key first, then the restore keys
    committed: str | None
    overlay: str | None
    save: str | None  # None: the run may not write
    layer: Layer | None
    note: str = ""


def pr_committed(n: int) -> str:
    return f"{BASE}/pr/{n}/committed/"


def branch(name: str, layer: str) -> str:
    return f"{BASE}/branch/{name}/{layer}/"


REPO = f"{BASE}/repo/committed/"
FORK = "the pull request comes from a fork"
PRT = "pull_request_target runs get a read-only cache token"
COMMENT = "issue_comment runs get a read-only cache token"
NO_PR = "this scope has no memory for this event"
OFF_DEFAULT = "repository memory is written only by runs on main"


def pr_scope(n: int, note: str = "") -> Expect:
    save = None if note else pr_committed(n) + RUN
    layer = None if note else Layer.COMMITTED
    return Expect((pr_committed(n),), pr_committed(n), None, save, layer, note)


def branch_overlay(name: str, n: int, note: str = "") -> Expect:
    overlay, committed = branch(name, f"pr-{n}"), branch(name, "committed")
    save = None if note else overlay + RUN
    layer = None if note else Layer.OVERLAY
    return Expect((overlay, committed), committed, overlay, save, layer, note)


def repo_overlay(n: int, note: str = "") -> Expect:
    overlay = f"{BASE}/repo/pr-{n}/"
    save = None if note else overlay + RUN
    layer = None if note else Layer.OVERLAY
    return Expect((overlay, REPO), REPO, overlay, save, layer, note)


def branch_committed(name: str) -> Expect:
    committed = branch(name, "committed")
    return Expect((committed,), committed, None, committed + RUN, Layer.COMMITTED)


NOTHING = Expect(None, None, None, None, None, NO_PR)
REPO_WRITE = Expect((REPO,), REPO, None, REPO + RUN, Layer.COMMITTED)
REPO_READ_ONLY = Expect((REPO,), REPO, None, None, None, OFF_DEFAULT)

TABLE: dict[tuple[str, str], Expect] = {
    # pull_request from a branch of the repository: writes its own layer in refs/pull/42/merge
    ("pull_request/same-repo", "pr"): pr_scope(42),
    ("pull_request/same-repo", "branch"): branch_overlay("main", 42),
    ("pull_request/same-repo", "repo"): repo_overlay(42),
    # pull_request from a fork: reads the same keys, never writes
    ("pull_request/fork", "pr"): pr_scope(57, FORK),
    ("pull_request/fork", "branch"): branch_overlay("main", 57, FORK),
    ("pull_request/fork", "repo"): repo_overlay(57, FORK),
    # pull_request_target: read-only cache token, fork or not
    ("pull_request_target/same-repo", "pr"): pr_scope(57, PRT),
    ("pull_request_target/same-repo", "branch"): branch_overlay("main", 57, PRT),
    ("pull_request_target/same-repo", "repo"): repo_overlay(57, PRT),
    ("pull_request_target/fork", "pr"): pr_scope(57, PRT),
    ("pull_request_target/fork", "branch"): branch_overlay("main", 57, PRT),
    ("pull_request_target/fork", "repo"): repo_overlay(57, PRT),
    # push to the default branch: writes committed memory
    ("push/main", "pr"): NOTHING,
    ("push/main", "branch"): branch_committed("main"),
    ("push/main", "repo"): REPO_WRITE,
    # push to a feature branch: its own branch memory; repository memory read-only
    ("push/feature", "pr"): NOTHING,
    ("push/feature", "branch"): branch_committed("feature%2Fretry"),
    ("push/feature", "repo"): REPO_READ_ONLY,
    ("schedule/main", "pr"): NOTHING,
    ("schedule/main", "branch"): branch_committed("main"),
    ("schedule/main", "repo"): REPO_WRITE,
    ("workflow_dispatch/main", "pr"): NOTHING,
    ("workflow_dispatch/main", "branch"): branch_committed("main"),
    ("workflow_dispatch/main", "repo"): REPO_WRITE,
    ("workflow_dispatch/feature", "pr"): NOTHING,
    ("workflow_dispatch/feature", "branch"): branch_committed("feature%2Fretry"),
    ("workflow_dispatch/feature", "repo"): REPO_READ_ONLY,
    # issue_comment: the payload has no base branch; the run is on the default branch
    ("issue_comment/collaborator", "pr"): pr_scope(42, COMMENT),
    ("issue_comment/collaborator", "branch"): branch_overlay("main", 42, COMMENT),
    ("issue_comment/collaborator", "repo"): repo_overlay(42, COMMENT),
    ("issue_comment/non-collaborator", "pr"): pr_scope(42, COMMENT),
    ("issue_comment/non-collaborator", "branch"): branch_overlay("main", 42, COMMENT),
    ("issue_comment/non-collaborator", "repo"): repo_overlay(42, COMMENT),
}


def test_the_table_covers_every_context_and_scope() -> None:
    assert set(TABLE) == set(itertools.product(CONTEXTS, [kind.value for kind in ScopeKind]))


def as_expect(scope: MemoryScope) -> Expect:
    return Expect(
        restore=scope.restore.all() if scope.restore else None,
        committed=scope.committed_prefix,
        overlay=scope.overlay_prefix,
        save=scope.save_key,
        layer=scope.layer,
        note=scope.write_note,
    )


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_scope_table(context: str, kind: str) -> None:
    scope = scope_of(context, kind)
    assert as_expect(scope) == TABLE[context, kind]
    assert scope.kind is ScopeKind(kind)
    assert scope.may_write is (scope.save_key is not None)
    assert (scope.write_note == "") is scope.may_write


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_enable_memory_false_neither_restores_nor_saves(context: str, kind: str) -> None:
    enabled = scope_of(context, kind)
    scope = scope_of(context, kind, enable_memory=False)
    assert (scope.restore, scope.save_key, scope.layer) == (None, None, None)
    assert (scope.may_write, scope.write_note) == (False, "enable_memory is false")
    # The prefixes still say where memory would live (for messages).
    assert (scope.committed_prefix, scope.overlay_prefix) == (
        enabled.committed_prefix,
        enabled.overlay_prefix,
    )


# -- descriptions ----------------------------------------------------------------------------

DESCRIPTIONS = [
    ("pull_request/same-repo", "pr", "memory of pull request #42"),
    ("push/main", "pr", "pull request memory (not available: no pull request)"),
    ("pull_request/same-repo", "branch", "memory of branch main"),
    ("push/feature", "branch", "memory of branch feature/retry"),
    ("push/feature", "repo", "repository memory (default branch main)"),
]


@pytest.mark.parametrize(
    ("context", "kind", "description"), DESCRIPTIONS, ids=[f"{c}/{k}" for c, k, _ in DESCRIPTIONS]
)
def test_description(context: str, kind: str, description: str) -> None:
    assert scope_of(context, kind).description == description


# -- cases beside the table ------------------------------------------------------------------


def test_pull_request_into_another_branch_uses_that_branch() -> None:
    data = with_base(payload("pull_request_opened_same_repo"), "release/2.x")
    context = load_context(env_for("pull_request", "refs/pull/42/merge"), data)
    scope = fixed_scope(settings("branch"), context)
    assert as_expect(scope) == branch_overlay("release%2F2.x", 42)
    # Repository memory is the same wherever the pull request goes.
    assert as_expect(fixed_scope(settings("repo"), context)) == repo_overlay(42)


@pytest.mark.parametrize("default_branch", ["master", "develop"])
def test_schedule_writes_repository_memory_whatever_the_default_branch_is_called(
    default_branch: str,
) -> None:
    # The schedule payload may hold only the cron line; the run is on the default branch.
    context = load_context(env_for("schedule", f"refs/heads/{default_branch}"), payload("schedule"))
    assert as_expect(fixed_scope(settings("repo"), context)) == REPO_WRITE
    assert as_expect(fixed_scope(settings("branch"), context)) == branch_committed(default_branch)


def test_push_to_a_repository_with_another_default_branch() -> None:
    data = copy.deepcopy(payload("push_main"))
    data["repository"]["default_branch"] = "trunk"
    on_main = load_context(env_for("push", "refs/heads/main"), data)
    on_trunk = load_context(env_for("push", "refs/heads/trunk"), data)
    assert fixed_scope(settings("repo"), on_main).write_note == (
        "repository memory is written only by runs on trunk"
    )
    assert fixed_scope(settings("repo"), on_trunk).save_key == REPO + RUN


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_layer_of_restored_keys(context: str, kind: str) -> None:
    scope = scope_of(context, kind)
    if scope.committed_prefix:
        assert scope.layer_of(scope.committed_prefix + "999-1") is Layer.COMMITTED
    if scope.overlay_prefix:
        assert scope.layer_of(scope.overlay_prefix + "999-1") is Layer.OVERLAY
    assert scope.layer_of("memory-agent/v1/someone-else/repo/committed/999-1") is None
    if scope.save_key:
        assert scope.layer_of(scope.save_key) is scope.layer


# -- properties of every key -----------------------------------------------------------------

AGENTS = ["memory-agent", "a", "Review.Bot_2", "x" * 64]


def all_keys(scope: MemoryScope) -> list[str]:
    keys = list(scope.restore.all()) if scope.restore else []
    return keys + [k for k in (scope.committed_prefix, scope.overlay_prefix, scope.save_key) if k]


@pytest.mark.parametrize("agent", AGENTS, ids=["default", "a", "mixed-case", "64-chars"])
@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_every_key_obeys_the_cache_rules_and_stays_in_its_agent_and_scope(
    context: str, kind: str, agent: str
) -> None:
    scope = scope_of(context, kind, agent_name=agent)
    own = f"memory-agent/v1/{agent.lower()}/{kind}/"
    for key in all_keys(scope):
        assert len(key) <= MAX_KEY_LENGTH
        assert "," not in key
        assert key.startswith(own)
    if scope.restore is not None:
        assert len(scope.restore.all()) <= MAX_KEYS
        # Every prefix ends in "/": "pr-1/" never matches "pr-10/".
        assert all(key.endswith("/") for key in scope.restore.all())
    if scope.save_key is not None:
        assert scope.save_key.endswith(f"/{RUN}")


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_save_key_is_unique_per_attempt_and_restore_keys_are_not(context: str, kind: str) -> None:
    first = fixed_scope(settings(kind), CONTEXTS[context])
    again = fixed_scope(
        settings(kind), _replace_run(CONTEXTS[context], run_id=RUN_ID, run_attempt="2")
    )
    later = fixed_scope(
        settings(kind), _replace_run(CONTEXTS[context], run_id="12345678999", run_attempt="1")
    )
    assert first.restore == again.restore == later.restore
    if first.save_key is None:
        assert again.save_key is later.save_key is None
        return
    assert again.save_key is not None
    assert later.save_key is not None
    assert again.save_key.endswith(f"/{RUN_ID}-2-{JOB}-{NONCE}")
    assert later.save_key.endswith(f"/12345678999-1-{JOB}-{NONCE}")
    assert len({first.save_key, again.save_key, later.save_key}) == 3
    # A save lands where this scope's restore keys find it.
    assert first.restore is not None
    assert first.save_key.startswith(first.restore.primary)


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
def test_two_jobs_of_one_run_never_share_a_save_key(context: str, kind: str) -> None:
    # Two jobs of one run (two job ids), and two legs of one matrix job (the same job id):
    # the cache refuses a second save under a key, so a shared key loses a job's memory.
    run = CONTEXTS[context]
    jobs = [
        compute_scope(settings(kind), run, nonce=NONCE),
        compute_scope(settings(kind), replace(run, job="lint"), nonce=NONCE),
        compute_scope(settings(kind), run),
        compute_scope(settings(kind), run),
    ]
    keys = [scope.save_key for scope in jobs]
    if keys[0] is None:
        assert keys == [None] * 4
        return
    assert len(set(keys)) == 4
    assert all(key.startswith(jobs[0].restore.primary) for key in keys if key and jobs[0].restore)


def test_the_nonce_is_random_hex() -> None:
    nonces = {new_nonce() for _ in range(50)}
    assert len(nonces) == 50
    assert all(len(n) == 8 and int(n, 16) >= 0 for n in nonces)


def test_a_run_without_a_job_id_still_gets_a_valid_key() -> None:
    run = replace(CONTEXTS["push/main"], job="")
    assert fixed_scope(settings("repo"), run).save_key == f"{REPO}{RUN_ID}-1-job-{NONCE}"


def _replace_run(context: RunContext, *, run_id: str, run_attempt: str) -> RunContext:
    return replace(context, run_id=run_id, run_attempt=run_attempt)


def test_longest_parts_still_fit() -> None:
    data = with_base(payload("pull_request_opened_same_repo"), "🌿" * 255)
    data["pull_request"]["number"] = 2_147_483_647
    context = load_context(
        env_for(
            "pull_request",
            "refs/pull/2147483647/merge",
            GITHUB_RUN_ID="9" * 20,
            GITHUB_RUN_ATTEMPT="999",
            GITHUB_JOB="j" * 100,  # GitHub's limit for a job id
        ),
        data,
    )
    for kind in ScopeKind:
        scope = fixed_scope(settings(kind.value, agent_name="x" * 64), context)
        assert all(len(key) <= MAX_KEY_LENGTH for key in all_keys(scope))


# -- branch names ----------------------------------------------------------------------------

BRANCH_NAMES = [
    pytest.param("main", "main", id="plain"),
    pytest.param("feature/retry", "feature%2Fretry", id="slash"),
    pytest.param("users/mona/a/b", "users%2Fmona%2Fa%2Fb", id="slashes"),
    pytest.param("fix,comma", "fix%2Ccomma", id="comma"),
    pytest.param("100%", "100%25", id="percent"),
    pytest.param("feature%2Fretry", "feature%252Fretry", id="percent-looks-encoded"),
    pytest.param("with space", "with%20space", id="space"),
    pytest.param(
        "fix-ü/ブランチ", "fix-%C3%BC%2F%E3%83%96%E3%83%A9%E3%83%B3%E3%83%81", id="unicode"
    ),
    pytest.param("v1.2_rc-3~x", "v1.2_rc-3~x", id="unreserved-kept"),
]


def branch_scope(name: str, agent: str = "memory-agent") -> MemoryScope:
    context = load_context(env_for("push", f"refs/heads/{name}"), payload("push_feature_branch"))
    return fixed_scope(settings("branch", agent_name=agent), context)


@pytest.mark.parametrize(("name", "encoded"), BRANCH_NAMES)
def test_branch_names_are_percent_encoded(name: str, encoded: str) -> None:
    assert encode_part(name) == encoded
    assert unquote(encoded) == name
    scope = branch_scope(name)
    assert scope.committed_prefix == f"{BASE}/branch/{encoded}/committed/"
    assert scope.save_key == f"{BASE}/branch/{encoded}/committed/{RUN}"


LONG_NAMES = [
    pytest.param("b" * 255, id="255-ascii"),
    pytest.param("release/" + "x" * 247, id="255-with-slash"),
    pytest.param("é" * 255, id="255-two-byte"),
    pytest.param("ブ" * 255, id="255-three-byte"),
    pytest.param("🌿" * 255, id="255-four-byte"),
    pytest.param("a/" * 60, id="many-slashes"),
    pytest.param(",% " * 85, id="all-escaped"),
]


@pytest.mark.parametrize("name", LONG_NAMES)
def test_long_branch_names_are_bounded_and_readable(name: str) -> None:
    part = encode_part(name)
    assert len(part) <= 120
    head, sep, digest = part.partition("~")
    assert sep == "~"
    assert len(digest) == 16
    assert int(digest, 16) >= 0
    assert len(head) <= 40
    assert name.startswith(unquote(head))  # a readable head of the name itself
    scope = branch_scope(name, agent="x" * 64)
    for key in all_keys(scope):
        assert len(key) <= MAX_KEY_LENGTH
        assert "," not in key


def test_encoding_at_the_length_limit() -> None:
    assert encode_part("x" * 120) == "x" * 120
    assert encode_part("x" * 121).startswith("x" * 40 + "~")
    assert len(encode_part("é" * 20)) == 120  # 20 x "%C3%A9" fits exactly
    assert "~" in encode_part("é" * 21)


def test_undecodable_bytes_in_a_ref_do_not_crash() -> None:
    # os.environ carries bytes that are not UTF-8 as lone surrogates.
    for name in ("bad-\udcff", "bad-\udcff" * 40):
        part = encode_part(name)
        assert "/" not in part
        assert "," not in part
        assert len(part) <= 120
    assert encode_part("bad-\udcff") != encode_part("bad-\udcfe")


DISTINCT_BRANCHES = [
    "feature/retry",
    "feature%2Fretry",
    "feature-retry",
    "Feature/Retry",
    "feature/retry/",
    "feature/retry ",
    "b" * 255,
    "b" * 254 + "c",
    "c" + "b" * 254,
    "é" * 255,
    "é" * 254 + "è",
    "🌿" * 255,
    "🌿" * 254 + "🍀",
]


def test_distinct_branches_get_distinct_prefixes_none_a_prefix_of_another() -> None:
    prefixes = [branch_scope(name).committed_prefix or "" for name in DISTINCT_BRANCHES]
    assert len(set(prefixes)) == len(DISTINCT_BRANCHES)
    for one, other in itertools.permutations(prefixes, 2):
        assert not other.startswith(one)


# -- no collisions between pull requests and between agents ----------------------------------


def pr_scope_for(number: int, kind: str, agent: str = "memory-agent") -> MemoryScope:
    data = copy.deepcopy(payload("pull_request_opened_same_repo"))
    data["number"] = data["pull_request"]["number"] = number
    context = load_context(env_for("pull_request", f"refs/pull/{number}/merge"), data)
    return fixed_scope(settings(kind, agent_name=agent), context)


@pytest.mark.parametrize("kind", [kind.value for kind in ScopeKind])
@pytest.mark.parametrize(("one", "other"), [(1, 10), (1, 11), (4, 42), (42, 420)])
def test_pull_request_prefixes_do_not_collide(kind: str, one: int, other: int) -> None:
    first, second = pr_scope_for(one, kind), pr_scope_for(other, kind)
    own_first = first.overlay_prefix or first.committed_prefix or ""
    own_second = second.overlay_prefix or second.committed_prefix or ""
    assert own_first != own_second
    assert second.save_key is not None
    assert first.save_key is not None
    assert not second.save_key.startswith(own_first)
    assert not first.save_key.startswith(own_second)
    assert first.layer_of(second.save_key) is not Layer.OVERLAY


@pytest.mark.parametrize(("context", "kind"), TABLE, ids=[f"{c}/{k}" for c, k in TABLE])
@pytest.mark.parametrize(("one", "other"), [("a", "ab"), ("ab", "a"), ("bot", "bot.2")])
def test_agents_never_see_each_others_keys(context: str, kind: str, one: str, other: str) -> None:
    first = scope_of(context, kind, agent_name=one)
    second = scope_of(context, kind, agent_name=other)
    if first.restore is None or second.save_key is None:
        return
    assert not any(second.save_key.startswith(key) for key in first.restore.all())
    assert first.layer_of(second.save_key) is None


@pytest.mark.parametrize("context", CONTEXTS)
def test_scopes_never_see_each_others_keys(context: str) -> None:
    scopes = {kind.value: scope_of(context, kind.value) for kind in ScopeKind}
    for reader, writer in itertools.permutations(scopes.values(), 2):
        if reader.restore is None or writer.save_key is None:
            continue
        assert not any(writer.save_key.startswith(key) for key in reader.restore.all())
