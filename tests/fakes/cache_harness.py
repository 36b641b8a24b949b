"""A workspace, a captured workflow log and ``ActionsCacheStore``s pointed at the fake service."""

from __future__ import annotations

import io
import shutil
from collections.abc import Mapping
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
