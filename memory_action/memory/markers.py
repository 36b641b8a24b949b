"""The agent's name, and the hidden marker that says which agent a sticky comment belongs to.

The name is a path component of every memory key and of the memory branch's tree, and it names
the agent in its comment's marker and proposal block: settings check it, the comment is found by
it, and the proposal block carries it, so its pattern is written here, once.
"""

from __future__ import annotations

import re

# A path component of every key and of the memory branch's tree: never ".", ".." or ".git"
# (a letter or digit first), never a name Windows or git refs would cut (no "." last).
AGENT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?")
AGENT_NAME_RULE = (
    "1 to 64 of letters, digits, '.', '_' and '-', a letter or digit first, no '.' last"
)
MARKER_PREFIX = "<!-- memory-agent:"


def comment_marker(agent_name: str) -> str:
    """The hidden marker that identifies an agent's sticky comment.

    The closing `` -->`` delimits the name, so the marker of agent "a" is not part of agent "ab"'s.
    """
    if not AGENT_NAME.fullmatch(agent_name):
        raise ValueError(f"agent name {agent_name!r} must match {AGENT_NAME.pattern}")
    return f"{MARKER_PREFIX}sticky agent={agent_name} -->"


def marker_agent(marker: str) -> str | None:
    """The agent name ``comment_marker`` wrote into ``marker``; None for anything else."""
    name = marker.removeprefix(f"{MARKER_PREFIX}sticky agent=").removesuffix(" -->")
    return name if AGENT_NAME.fullmatch(name) and comment_marker(name) == marker else None
