"""Which Actions cache service this run can use, decided from the environment alone.

A Docker container action never receives ``ACTIONS_CACHE_SERVICE_V2`` (the runner only exports
it to node actions), so the protocol is chosen as ``actions-cache-protocol.md`` §1.2 recommends:

1. ``ACTIONS_CACHE_SERVICE_V2`` non-empty → exactly what ``@actions/cache`` does (§1.1);
2. else not GHES and ``ACTIONS_RESULTS_URL`` set → v2, Twirp at that URL's origin;
3. else ``ACTIONS_CACHE_URL`` set → v1 (GHES);
4. else no cache: the caller turns memory off with a notice.
"""

from __future__ import annotations

import enum
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from memory_action.store.secret import Secret

DEFAULT_SERVER_URL = "https://github.com"


class CacheProtocol(enum.StrEnum):
    V1 = "v1"
    V2 = "v2"


@dataclass(frozen=True, kw_only=True)
class CacheConfig:
    """Everything the cache store needs from the environment; the token never shows in repr."""

    protocol: CacheProtocol
    base_url: str  # v2: origin of ACTIONS_RESULTS_URL; v1: ACTIONS_CACHE_URL ending in "/"
    token: Secret
    workspace: Path
    temp_dir: Path
    may_read: bool = True
    may_write: bool = True
    mode: str = ""  # ACTIONS_CACHE_MODE as given (trimmed, lower-cased), for messages


@dataclass(frozen=True, kw_only=True)
class CacheDecision:
    """A config, or None with the reason the cache cannot be used (for the caller's notice)."""

    config: CacheConfig | None
    reason: str = ""


def is_ghes(env: Mapping[str, str]) -> bool:
    """Like ``isGhes`` of ``@actions/cache``: any host but github.com, *.ghe.com, *.localhost."""
    hostname = urlsplit(env.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).hostname or ""
    host = hostname.upper().rstrip()
    if not host:
        return False
    return not (host == "GITHUB.COM" or host.endswith((".GHE.COM", ".LOCALHOST")))


def cache_mode(env: Mapping[str, str]) -> tuple[bool, bool]:
    """``(may_read, may_write)`` from ``ACTIONS_CACHE_MODE``; unknown values allow both."""
    mode = env.get("ACTIONS_CACHE_MODE", "").strip().lower()
    return {
        "none": (False, False),
        "read": (True, False),
        "write": (True, True),
        "write-only": (False, True),
    }.get(mode, (True, True))


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL: Twirp paths start with "/", so any path is dropped."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def choose_protocol(env: Mapping[str, str]) -> CacheProtocol | None:
    """The protocol per §1.2, or None when neither service URL is available."""
    results_url = env.get("ACTIONS_RESULTS_URL", "")
    cache_url = env.get("ACTIONS_CACHE_URL", "")
    ghes = is_ghes(env)
    if env.get("ACTIONS_CACHE_SERVICE_V2"):
        # A truthiness test in the JS client: even "false" selects v2 (except on GHES).
        if not ghes:
            return CacheProtocol.V2 if results_url else None
        return CacheProtocol.V1 if cache_url else None
    if not ghes and results_url:
        return CacheProtocol.V2
    return CacheProtocol.V1 if cache_url else None


def decide_cache_config(env: Mapping[str, str]) -> CacheDecision:
    """Read the cache environment; never raises, a missing piece gives a reason instead."""
    protocol = choose_protocol(env)
    if protocol is None:
        return CacheDecision(
            config=None,
            reason="the Actions cache is not available to this step "
            "(neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL is set)",
        )
    token = env.get("ACTIONS_RUNTIME_TOKEN", "")
    if protocol is CacheProtocol.V2:
        base = origin(env.get("ACTIONS_RESULTS_URL", ""))
        if base is None:
            return CacheDecision(config=None, reason="ACTIONS_RESULTS_URL is not an http(s) URL")
        if not token:
            return CacheDecision(
                config=None, reason="ACTIONS_RUNTIME_TOKEN is not set (cache service v2)"
            )
    else:
        base = _v1_base(env)
    may_read, may_write = cache_mode(env)
    return CacheDecision(
        config=CacheConfig(
            protocol=protocol,
            base_url=base,
            token=Secret(token),  # v1 sends "Bearer " with an empty token, like the JS client
            workspace=Path(env.get("GITHUB_WORKSPACE") or Path.cwd()),
            temp_dir=Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()),
            may_read=may_read,
            may_write=may_write,
            mode=env.get("ACTIONS_CACHE_MODE", "").strip().lower(),
        )
    )


def _v1_base(env: Mapping[str, str]) -> str:
    # The JS client concatenates "_apis/artifactcache/" to this base, so it must end in "/".
    base = env.get("ACTIONS_CACHE_URL", "")
    return base if base.endswith("/") else base + "/"
