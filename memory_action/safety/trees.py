"""Walking and removing folder trees that came from outside, without recursion.

A restored cache entry or a checkout can hold a tree thousands of levels deep. Python 3.11's
``os.walk``, ``Path.rglob`` and ``shutil.rmtree`` recurse once per level, so such a tree raises
``RecursionError`` (and ``rmtree`` leaves it half removed). The functions here keep their own
list of folders instead, and never follow a symbolic link.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

# How many folders deep a restored memory entry may go below the memory folder. Memory itself
# needs 2 (``.memory-agent/state.json``); anything near the limit is not ours.
MAX_TREE_DEPTH = 32


def _is_folder(path: str | Path) -> bool:
    return stat.S_ISDIR(os.lstat(path).st_mode)


def remove_tree(path: Path) -> list[str]:
    """Remove ``path`` (a file, a link, or a folder with everything in it); never follows links.

    Returns what was removed, named relative to ``path``'s parent; folders end with ``/``.
    Each folder met is first moved up to sit directly under ``path``, so no path this function
    touches is longer than two names below it, however deep the tree.
    """
    if not _is_folder(path):
        path.unlink()
        return [path.name]
    removed: list[str] = []
    pending = [(path, path.name)]  # (where a folder is now, its name as it was found)
    emptied: list[tuple[Path, str]] = []
    while pending:
        here, name = pending.pop()
        with os.scandir(here) as listing:
            children = list(listing)
        for child in children:
            child_name = f"{name}/{child.name}"
            if not child.is_dir(follow_symlinks=False):
                Path(child.path).unlink()
                removed.append(child_name)
            elif here == path:
                pending.append((Path(child.path), child_name))
            else:
                moved = path / f".removing-{secrets.token_hex(8)}"
                Path(child.path).rename(moved)
                pending.append((moved, child_name))
        emptied.append((here, name))
    for folder, name in reversed(emptied):  # every folder after the ones moved out of it
        folder.rmdir()
        removed.append(f"{name}/")
    return removed


def discard_tree(path: Path) -> None:
    """``remove_tree`` for clean-up: a missing path or a failure to remove is not an error."""
    with suppress(OSError):
        remove_tree(path)


def walk_tree(root: Path) -> Iterator[Path]:
    """``root`` and everything under it, parents before children; links are listed, not
    followed, and a folder that cannot be listed is skipped."""
    if not os.path.lexists(root):
        return
    yield root
    pending = [root] if _is_folder(root) else []
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                children = list(listing)
        except OSError:
            continue
        for child in children:
            yield Path(child.path)
            if child.is_dir(follow_symlinks=False):
                pending.append(Path(child.path))
