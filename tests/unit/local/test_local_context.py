"""The run context of ``review --local``: a trusted pull request numbered 0 that GitHub never
saw, with its base branch and the default branch named as git names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_action.local.git_diff import open_change
from memory_action.local.run_context import LOCAL_EVENT, branch_name, checkout_context
from memory_action.memory.trust import Trust
from tests.fakes.git_repo import AUTHOR, GitRepo


def test_a_local_change_is_a_trusted_pull_request_numbered_0(
    repo: GitRepo, env: dict[str, str], tmp_path: Path
) -> None:
    context = checkout_context(open_change(repo.root, "main", env), tmp_path, no_save=False)

    assert context.event_name == LOCAL_EVENT
    assert (context.trust, context.may_write, context.write_note) == (Trust.TRUSTED, True, "")
    assert context.repository == "repo"  # no GitHub remote: the folder's name
    assert (context.ref, context.default_branch) == ("refs/heads/feature", "main")
    pr = context.pull_request
    assert pr is not None
    assert (pr.number, pr.base_ref, pr.head_ref, pr.author) == (0, "main", "feature", AUTHOR[0])
    assert pr.head_sha == context.sha == repo.git("rev-parse", "HEAD").strip()
    assert context.run_id.startswith("local")


def test_branches_come_from_the_remote_and_a_sha_base_uses_the_default_branch(
    repo: GitRepo, env: dict[str, str], tmp_path: Path
) -> None:
    repo.git("remote", "add", "origin", "https://github.com/octo/demo.git")
    repo.git("update-ref", "refs/remotes/origin/trunk", repo.git("rev-parse", "main").strip())
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    repo.git("switch", "--quiet", "--detach", "feature")

    context = checkout_context(open_change(repo.root, "main~1", env), tmp_path, no_save=True)

    assert context.repository == "octo/demo"
    assert context.default_branch == "trunk"
    assert context.pull_request is not None
    assert context.pull_request.base_ref == "trunk"  # main~1 is no branch
    assert context.ref == ""  # detached
    assert (context.may_write, context.write_note) == (False, "--no-save was given")


@pytest.mark.parametrize(
    ("full_ref", "name"),
    [
        ("refs/heads/main", "main"),
        ("refs/heads/team/x", "team/x"),
        ("refs/remotes/origin/dev/y", "dev/y"),
        ("refs/tags/v1", ""),
        ("", ""),
    ],
)
def test_branch_name(full_ref: str, name: str) -> None:
    assert branch_name(full_ref) == name
