"""The GitHub fakes refuse what GitHub's published descriptions refuse.

``memory_action.evaluation.github.contract`` checks every request to the fakes and every answer
they give against the REST OpenAPI description of api.github.com and the GraphQL schema (npm
packages in ``tests/interop``); ``tests/conftest.py`` fails any test that left a violation.
These tests show that the check catches a request GitHub refuses and a canned answer GitHub
would never give, through the fake as the code under test meets it. Without the descriptions
they skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from memory_action.evaluation.github import contract as github_contract
from memory_action.github.client import GitHubClient
from memory_action.safety.outgoing import gate
from memory_action.store.git_remote import COMMIT, GitHubGitRemote
from tests.fakes.github_api import (
    API_URL,
    REPOSITORY,
    FakeGitHub,
    FakePullRequest,
    changed_file,
    serve_fetch_pull,
)

REPO = f"{API_URL}/repos/{REPOSITORY}"


@pytest.fixture(autouse=True, scope="module")
def descriptions() -> None:
    reason = github_contract.missing_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"GitHub's published descriptions are missing: {reason}. CI must check them.")
    pytest.skip(f"GitHub's published descriptions are missing: {reason}")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve_fetch_pull() as fake:
        yield fake


def client() -> GitHubClient:
    return GitHubClient("t", API_URL, REPOSITORY, retries=0)


def commit_request(branch_name: str) -> str:
    commit_input = {
        "branch": {"repositoryNameWithOwner": REPOSITORY, "branchName": branch_name},
        "expectedHeadOid": "a" * 40,
        "fileChanges": {"additions": [{"path": "AGENTS.md", "contents": "eAo="}]},
        "message": {"headline": "memory"},
    }
    return json.dumps({"query": COMMIT, "variables": {"input": commit_input}})


# -- GraphQL --------------------------------------------------------------------------------------


def test_a_qualified_branch_name_for_create_commit_on_branch_is_refused() -> None:
    """The call issue 18 found: GitHub documents the unqualified name."""
    [problem] = github_contract.check_graphql(commit_request("refs/heads/memory"), None)
    assert "CommittableBranch.branchName is 'refs/heads/memory'" in problem
    assert github_contract.check_graphql(commit_request("memory"), None) == []


def test_the_git_store_commits_through_the_fake_that_checks_the_schema(
    github: FakeGitHub,
) -> None:
    remote = GitHubGitRemote(client().repository, REPOSITORY)
    assert remote.create_branch("memory", {"AGENTS.md": "a\n"}, gate("root"))
    head = github.git.refs["refs/heads/memory"]
    remote.commit("refs/heads/memory", head, {"AGENTS.md": "b\n"}, (), (gate("memory"), gate("")))
    committed = github.git.head("memory")
    assert committed is not None
    assert committed.files == {"AGENTS.md": "b\n"}
    assert github_contract.take() == []


def test_a_document_the_schema_refuses_is_refused() -> None:
    query = {"query": 'query { repository(owner: "o") { nameWithOwner } }'}
    problems = github_contract.check_graphql(json.dumps(query), None)
    assert any("argument 'name' of type 'String!' is required" in p for p in problems)


def test_variables_of_the_wrong_type_are_refused() -> None:
    document = json.loads(commit_request("memory"))
    document["variables"]["input"]["expectedHeadOid"] = None
    problems = github_contract.check_graphql(json.dumps(document), None)
    assert any("expectedHeadOid" in p for p in problems), problems


def test_a_canned_graphql_answer_missing_a_field_is_refused() -> None:
    answer = json.dumps({"data": {"createCommitOnBranch": {"commit": {}}}})
    [problem] = github_contract.check_graphql(commit_request("memory"), (200, answer))
    assert "lacks 'oid'" in problem


def test_a_canned_graphql_answer_with_a_field_nobody_asked_for_is_refused() -> None:
    extra = {"createCommitOnBranch": {"commit": {"oid": "a" * 40, "url": "x"}}}
    [problem] = github_contract.check_graphql(
        commit_request("memory"), (200, json.dumps({"data": extra}))
    )
    assert "/createCommitOnBranch/commit/url not asked for" in problem


def test_a_rule_whose_documented_words_are_gone_says_so() -> None:
    rule = github_contract.INPUT_RULES["CommittableBranch.branchName"]
    [problem] = rule.check("The name of the branch.", "memory")
    assert "no longer says" in problem


# -- REST -----------------------------------------------------------------------------------------


def test_a_path_github_does_not_have_is_refused() -> None:
    [problem] = github_contract.check_rest("GET", f"{REPO}/pulls/7/changes", "", None)
    assert "no such path" in problem or "pull_number" in problem


def test_an_undocumented_query_parameter_is_refused() -> None:
    problems = github_contract.check_rest("GET", f"{REPO}/pulls/7/files?perpage=100", "", None)
    assert problems == [
        f"GET /repos/{REPOSITORY}/pulls/7/files (/repos/{{owner}}/{{repo}}/pulls/{{pull_number}}"
        "/files): query parameter 'perpage' is not one GitHub documents"
    ]


def test_a_request_body_the_schema_refuses_is_refused() -> None:
    body = json.dumps({"body": 7})
    problems = github_contract.check_rest("POST", f"{REPO}/issues/7/comments", body, None)
    assert any("request body at /body: 7 is not of type 'string'" in p for p in problems)


def test_a_ref_github_documents_as_rejected_is_refused() -> None:
    body = json.dumps({"ref": "heads/memory", "sha": "a" * 40})
    [problem] = github_contract.check_rest("POST", f"{REPO}/git/refs", body, None)
    assert "ref is 'heads/memory'" in problem


def test_a_canned_answer_of_the_wrong_shape_is_refused_through_the_fake(
    github: FakeGitHub,
) -> None:
    """A changed file whose ``status`` GitHub never sends: the fake that answers it breaks the
    contract, and the test that used it fails."""
    broken = changed_file("src/other.py", "@@ -1 +1 @@\n-a\n+b\n", status="edited")
    github.add_pull(FakePullRequest(number=8, files=[broken]))
    client().pull_request(8).changed_files()
    problems = github_contract.take()
    assert any("at /0/status: 'edited' is not one of" in p for p in problems), problems


def test_a_canned_answer_missing_a_required_field_is_refused() -> None:
    answer = json.dumps([{"filename": "a.py", "status": "added"}])
    problems = github_contract.check_rest("GET", f"{REPO}/pulls/7/files", "", (200, answer))
    assert any("at /0: 'additions' is a required property" in p for p in problems), problems


def test_an_undocumented_status_is_refused() -> None:
    [problem] = github_contract.check_rest("GET", f"{REPO}/pulls/7", "", (418, "{}"))
    assert "418, which GitHub does not document" in problem


def test_the_fakes_own_answers_keep_the_contract(github: FakeGitHub) -> None:
    """A whole pull request read through the fake leaves no violation (the conftest would fail
    the test too; this says it where it is the point)."""
    reader = client().pull_request(7)
    reader.info()
    reader.changed_files()
    reader.file_content("src/fetch.py")
    assert github_contract.take() == []
