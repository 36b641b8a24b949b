"""Folder trees and archive members thousands of levels deep, as an attacker would plant them.

``make_deep_tree`` builds through directory descriptors, so no path it uses is long; the tree it
leaves must be removed with ``memory_action.safety.trees.remove_tree`` (``shutil.rmtree`` recurses).
"""

from __future__ import annotations

import os
from pathlib import Path


def make_deep_tree(root: Path, depth: int, leaf: bytes | None = b"deep\n") -> None:
    """``root/d/d/.../d`` ``depth`` folders deep, with a file ``leaf.txt`` at the bottom."""
    root.mkdir(parents=True, exist_ok=True)
    here = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
            os.close(here)
            here = below
        if leaf is not None:
            fd = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here)
            os.write(fd, leaf)
            os.close(fd)
    finally:
        os.close(here)


def deep_name(depth: int, leaf: str = "leaf.txt") -> str:
    """A member name ``depth`` folders deep: ``d/d/.../d/leaf.txt``."""
    return "/".join(["d"] * depth + [leaf])
