"""How a ``memory-agent`` command gets the run's one GitHub client: ``main.github_client``,
handed down by ``cli``, so that no command builds a client of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from memory_action.github.client import GitHubClient

Connect: TypeAlias = Callable[[str, str, str], "GitHubClient"]  # token, API URL, owner/name
