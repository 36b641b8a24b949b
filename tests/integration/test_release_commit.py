"""scripts/release-commit, the release workflow's git step, against a real origin on disk.

A version tag on main becomes a release commit (a child of the tagged commit) whose action.yml
runs the image by digest; the version tag and the major tag point at it; main is untouched.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.fakes.git_repo import GitRepo, isolated_git_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release-commit"
IMAGE = "docker://ghcr.io/octo-org/memory-agent@sha256:" + "ab" * 32
ACTION = "name: memory-agent\nruns:\n  using: docker\n  image: Dockerfile\n"


@pytest.fixture
def checkout(tmp_path: Path) -> GitRepo:
    """A clone of an origin whose main has action.yml and the tag v1.2.3, as the workflow's."""
    env = isolated_git_env(tmp_path / "home")
    origin = GitRepo(tmp_path / "origin.git", env)
    origin.git("init", "--quiet", "--bare", "--initial-branch=main")
    source = GitRepo(tmp_path / "source", env)
    source.git("init", "--quiet", "--initial-branch=main")
    source.write("action.yml", ACTION)
    source.git("add", ".")
    source.git("commit", "--quiet", "-m", "the action")
    source.git("tag", "--annotate", "v1.2.3", "-m", "v1.2.3")
    source.git("remote", "add", "origin", str(origin.root))
    source.git("push", "--quiet", "origin", "main", "v1.2.3")
    clone = GitRepo(tmp_path / "clone", env)
    clone.git("clone", "--quiet", str(origin.root), ".")
    clone.git("checkout", "--quiet", "v1.2.3")
    return clone


def release(checkout: GitRepo, tag: str, image: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in checkout.env.items() if k != "GH_TOKEN"}
    return subprocess.run(
        [str(SCRIPT), tag, image],
        cwd=checkout.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def in_origin(checkout: GitRepo, *args: str) -> str:
    return checkout.git("--git-dir", str(checkout.root.parent / "origin.git"), *args)


def origin_file(checkout: GitRepo, ref: str, path: str) -> str:
    return in_origin(checkout, "show", f"{ref}:{path}")


def origin_rev(checkout: GitRepo, ref: str) -> str:
    return in_origin(checkout, "rev-parse", f"{ref}^{{commit}}").strip()


def test_the_tags_move_to_a_release_commit_that_runs_the_image_by_digest(
    checkout: GitRepo,
) -> None:
    source = origin_rev(checkout, "v1.2.3")
    done = release(checkout, "v1.2.3", IMAGE)
    assert done.returncode == 0, done.stderr
    released = origin_rev(checkout, "v1.2.3")
    assert origin_rev(checkout, "v1") == released
    assert origin_rev(checkout, f"{released}^") == source
    assert f"  image: {IMAGE}\n" in origin_file(checkout, "v1.2.3", "action.yml")
    assert origin_file(checkout, "main", "action.yml") == ACTION
    assert origin_rev(checkout, "main") == source


@pytest.mark.parametrize(
    ("tag", "image", "message"),
    [
        ("v1.2", IMAGE, "not a version tag"),
        ("v1.2.3", "docker://ghcr.io/octo-org/memory-agent:latest", "not an image pinned"),
        ("v1.2.3", IMAGE.replace("ab" * 32, "ab" * 31), "not an image pinned"),
    ],
)
def test_a_bad_tag_or_an_image_not_pinned_by_digest_is_refused(
    checkout: GitRepo, tag: str, image: str, message: str
) -> None:
    done = release(checkout, tag, image)
    assert done.returncode == 1
    assert message in done.stderr
    assert origin_file(checkout, "v1.2.3", "action.yml") == ACTION


def test_a_tag_off_main_is_refused(checkout: GitRepo) -> None:
    checkout.git("checkout", "--quiet", "-b", "side")
    checkout.write("action.yml", ACTION + "# side\n")
    checkout.git("commit", "--quiet", "-am", "side")
    checkout.git("tag", "--annotate", "v9.9.9", "-m", "v9.9.9")
    done = release(checkout, "v9.9.9", IMAGE)
    assert done.returncode == 1
    assert "is not on main" in done.stderr


def test_an_action_yml_without_the_dockerfile_line_is_refused(checkout: GitRepo) -> None:
    checkout.git("checkout", "--quiet", "main")
    checkout.write("action.yml", ACTION.replace("Dockerfile", IMAGE))
    checkout.git("commit", "--quiet", "-am", "already released")
    checkout.git("push", "--quiet", "origin", "main")
    checkout.git("tag", "--annotate", "v1.2.4", "-m", "v1.2.4")
    done = release(checkout, "v1.2.4", IMAGE)
    assert done.returncode == 1
    assert "exactly one '  image: Dockerfile' line" in done.stderr


def test_the_script_is_what_the_release_workflow_runs() -> None:
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert 'scripts/release-commit "$TAG" "docker://$IMAGE@$DIGEST"' in workflow
    assert os.access(SCRIPT, os.X_OK)
