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


AMBIENT_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_API_URL",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "MEMORY_AGENT_STORE_DIR",
    "MEMORY_AGENT_MODEL_API_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_CACHE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "ANTHROPIC_API_KEY",
    "LANGSMITH_GATEWAY",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)


@pytest.fixture
def no_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting of the developer (or of CI) may reach a CLI run."""
    for name in AMBIENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # The agent session writes LANGSMITH_TRACING=false into os.environ: setenv undoes it after.
    monkeypatch.setenv("LANGSMITH_TRACING", "false")


@pytest.fixture
def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken downloads its encodings on first use: no run may reach it."""
    import tiktoken  # noqa: PLC0415 - patched only where asked

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("tiktoken was used")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken, "encoding_for_model", refuse)
