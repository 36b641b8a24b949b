"""Fixtures shared by the integration tests; a module that needs another one defines its own
under the same name (a ``service`` on other refs, a ``github`` with other pull requests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.cache_harness import REFS, CacheHarness
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.click_corpus import MISSING, ClickCorpus, bundle_path, load_corpus
from tests.fakes.github_api import FakeGitHub, serve_fetch_pull
from tests.fakes.runner import ActionRunner


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """GitHub with pull request 7, which adds a retry loop to ``src/fetch.py``."""
    with serve_fetch_pull() as fake:
        yield fake


@pytest.fixture
def runner(tmp_path: Path) -> ActionRunner:
    """Runs the action with the local directory store."""
    return ActionRunner(tmp_path)


@pytest.fixture
def service() -> Iterator[FakeCacheService]:
    """The fake cache service; its token is a run of pull request 1 (``REFS``)."""
    with FakeCacheService(REFS) as fake:
        yield fake


@pytest.fixture
def cache(service: FakeCacheService, tmp_path: Path) -> Iterator[CacheHarness]:
    """A workspace and ``ActionsCacheStore``s pointed at ``service``."""
    harness = CacheHarness(service, tmp_path)
    harness.workspace.mkdir()
    yield harness
    harness.close()


@pytest.fixture(scope="session")
def click_corpus(tmp_path_factory: pytest.TempPathFactory) -> ClickCorpus:
    """The six real pull requests of ``../shared/corpus/click-prs.bundle``, cloned once."""
    bundle = bundle_path()
    if not bundle.is_file():
        pytest.skip(MISSING)
    return load_corpus(bundle, tmp_path_factory.mktemp("corpus") / "click.git")
