"""The repository the ``review --local`` unit tests read: ``feature_repository``, built in the
test's folder, read with an environment that keeps the developer's git config away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.git_repo import GitRepo, feature_repository, isolated_git_env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, **isolated_git_env(tmp_path / "home")}


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str]) -> GitRepo:
    return feature_repository(tmp_path / "repo", env)
