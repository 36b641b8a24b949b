"""A workspace, a captured workflow log and ``ActionsCacheStore``s pointed at the fake service."""

from __future__ import annotations

import io
import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memory_action.gha import Workflow
from memory_action.store.actions_cache import ActionsCacheStore, CacheTuning
from memory_action.store.cache_blob import BlobSizes
from memory_action.store.cache_env import decide_cache_config
from memory_action.store.cache_http import Timeouts
from memory_action.store.cache_protocol import RetryClock
from tests.fakes.cache_service import FakeCacheService

REFS = ("refs/pull/1/merge", "refs/heads/main")
MEMORY = PurePosixPath(".agent-memory")
GHES_URL = "https://github.example.corp"
# The waits the retry clocks below record for a Twirp call tried five times: with random() = 0.5,
# the middle of each range of the JS client's backoff.
JS_BACKOFF = [3.0, 5.625, 8.4375, 12.65625]


@dataclass
class CacheHarness:
    service: FakeCacheService
    root: Path
    sleeps: list[float] = field(default_factory=list)
    out: io.StringIO = field(default_factory=io.StringIO)
    stores: list[ActionsCacheStore] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.workflow = Workflow(env={"GITHUB_ACTIONS": "true"}, out=self.out)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def folder(self) -> Path:
        return self.workspace / MEMORY

    def env(self, protocol: str = "v2", token: str | None = None, **extra: str) -> dict[str, str]:
        env = self.service.env(protocol, token)
        if protocol == "v1":
            env["GITHUB_SERVER_URL"] = GHES_URL
        env.update(
            GITHUB_ACTIONS="true",
            GITHUB_WORKSPACE=str(self.workspace),
            RUNNER_TEMP=str(self.root / "runner_temp"),
        )
        return {**env, **extra}

    def store(
        self,
        protocol: str = "v2",
        *,
        token: str | None = None,
        timeout: float = 5.0,
        env: dict[str, str] | None = None,
        **tuning: Any,
    ) -> ActionsCacheStore:
        config = decide_cache_config({**self.env(protocol, token), **(env or {})}).config
        assert config is not None
        settings = CacheTuning(
            timeouts=Timeouts(connect=timeout, rpc=timeout, blob=timeout),
            clock=tuning.pop("clock", RetryClock(sleep=self.sleeps.append, random=lambda: 0.5)),
            blob_sizes=tuning.pop("blob_sizes", BlobSizes()),
            **tuning,
        )
        store = ActionsCacheStore(config, MEMORY, self.workflow, tuning=settings)
        self.stores.append(store)
        return store

    def write_memory(self, files: Mapping[str, str | bytes]) -> None:
        for name, content in files.items():
            path = self.folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode() if isinstance(content, str) else content
            path.write_bytes(data)

    def read_memory(self) -> dict[str, str]:
        if not self.folder.exists():
            return {}
        return {
            path.relative_to(self.folder).as_posix(): path.read_text(errors="replace")
            for path in sorted(self.folder.rglob("*"))
            if path.is_file()
        }

    def clear_memory(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        for store in self.stores:
            store.close()


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root`` by relative POSIX path: a file's bytes, "dir", or what else it
    is (links are described, never followed). Empty when ``root`` does not exist."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            mode = os.lstat(path).st_mode
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(mode):
                found[rel] = f"symlink to {path.readlink()}"
            elif stat.S_ISDIR(mode):
                found[rel] = "dir"
            elif stat.S_ISREG(mode):
                found[rel] = path.read_bytes()
            else:
                found[rel] = f"special file {stat.filemode(mode)}"
    return found


def fast_tuning(sleeps: list[float], timeout: float = 1.0) -> CacheTuning:
    """Short timeouts, and a retry clock that records its waits instead of sleeping."""
    return CacheTuning(
        timeouts=Timeouts(connect=timeout, rpc=timeout, blob=timeout),
        clock=RetryClock(sleep=sleeps.append, random=lambda: 0.5),
    )


@contextmanager
def default_tuning(tuning: CacheTuning) -> Iterator[None]:
    """Within the block, every ``ActionsCacheStore`` built without a tuning (as
    ``store_wiring.py`` builds it inside ``main()``) gets ``tuning``.

    It swaps the keyword default of ``ActionsCacheStore.__init__`` (``tuning=None``, read as
    ``tuning or CacheTuning()``), so no production code needs a test-only switch.
    """
    defaults = ActionsCacheStore.__init__.__kwdefaults__
    assert defaults is not None
    assert "tuning" in defaults
    previous = defaults["tuning"]
    defaults["tuning"] = tuning
    try:
        yield
    finally:
        defaults["tuning"] = previous
