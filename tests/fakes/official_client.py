"""The official ``@actions/cache`` client, run with node as a separate process.

``tests/interop/save.mjs`` and ``restore.mjs`` call ``saveCache`` / ``restoreCache`` and print
one JSON line last. This module builds the environment a JS action step would see (including
``ACTIONS_CACHE_SERVICE_V2``, which a container action never gets), runs them, and parses that
line. With ``zstd=False`` the client runs on a ``PATH`` made of links to ``tar`` and ``gzip``
only, so ``zstd --version`` fails and it picks gzip, as on a runner without zstd.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.cache_service import FakeCacheService

INTEROP_DIR = Path(__file__).resolve().parent.parent / "interop"
PACKAGE_JSON = INTEROP_DIR / "node_modules" / "@actions" / "cache" / "package.json"
EXPECTED_VERSION = "6.3.0"
GZIP_ONLY_TOOLS = ("tar", "gzip")  # what `tar -z` needs; zstd is left out on purpose
TIMEOUT_SECONDS = 60.0


def missing_reason() -> str | None:
    """Why the official client cannot run here (None when it can)."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not PACKAGE_JSON.is_file():
        return "tests/interop/node_modules is missing (run `npm ci` in tests/interop)"
    version = json.loads(PACKAGE_JSON.read_text()).get("version")
    if version != EXPECTED_VERSION:
        return f"tests/interop has @actions/cache {version}, not {EXPECTED_VERSION}"
    if shutil.which("tar") is None:
        return "tar is not on PATH"
    return None


@dataclass(frozen=True)
class JsResult:
    """What a script printed last, plus the whole log (workflow commands, tar command lines)."""

    result: dict[str, Any]
    stdout: str
    stderr: str
    returncode: int

    @property
    def matched_key(self) -> str | None:
        value = self.result.get("matchedKey")
        return value if isinstance(value, str) else None

    @property
    def cache_hit(self) -> bool:
        return self.result.get("cacheHit") is True

    @property
    def cache_id(self) -> int | None:
        value = self.result.get("cacheId")
        return value if isinstance(value, int) else None

    def log_lines(self, prefix: str) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(prefix)]


@dataclass
class OfficialClient:
    """Runs the JS client in ``workspace`` against ``service`` (v2 or v1)."""

    service: FakeCacheService
    workspace: Path
    temp_dir: Path  # RUNNER_TEMP; also holds the gzip-only tool folder
    protocol: str = "v2"
    token: str | None = None
    zstd: bool = True
    extra_env: Mapping[str, str] | None = None

    def env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "") if self.zstd else str(self._gzip_only_bin()),
            "HOME": str(self.temp_dir),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp_dir),
            "GITHUB_SERVER_URL": "https://github.com",
            "ACTIONS_RUNTIME_TOKEN": self.token or self.service.token,
        }
        if self.protocol == "v2":
            env["ACTIONS_CACHE_SERVICE_V2"] = "true"  # node actions get it; containers never do
            env["ACTIONS_RESULTS_URL"] = self.service.results_url
        else:
            env["ACTIONS_CACHE_URL"] = self.service.cache_url
        env.update(self.extra_env or {})
        return env

    def save(self, path: str, key: str) -> JsResult:
        return self._run("save.mjs", path, key)

    def restore(self, path: str, primary_key: str, *restore_keys: str) -> JsResult:
        return self._run("restore.mjs", path, primary_key, *restore_keys)

    def _run(self, script: str, *args: str) -> JsResult:
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        node = shutil.which("node")
        assert node is not None, missing_reason()
        done = subprocess.run(
            [node, str(INTEROP_DIR / script), *args],
            cwd=self.workspace,  # relative paths resolve here, as in a job step
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        try:
            result = json.loads(lines[-1]) if lines else {}
        except ValueError:
            result = {}
        if not isinstance(result, dict) or "op" not in result:
            raise AssertionError(
                f"node {script} printed no result (exit {done.returncode}):\n"
                f"{done.stdout}\n{done.stderr}"
            )
        return JsResult(result, done.stdout, done.stderr, done.returncode)

    def _gzip_only_bin(self) -> Path:
        folder = self.temp_dir / "gzip-only-bin"
        if not folder.is_dir():
            folder.mkdir(parents=True)
            for tool in GZIP_ONLY_TOOLS:
                found = shutil.which(tool)
                assert found is not None, f"{tool} is not on PATH"
                (folder / tool).symlink_to(found)
        return folder
