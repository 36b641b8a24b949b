"""Walking and removing trees without recursion, however deep they are."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from memory_action.safety.trees import discard_tree, remove_tree, walk_tree
from tests.fakes.deep_tree import make_deep_tree


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ walks iteratively")
def test_the_standard_library_of_this_python_recurses_on_a_deep_tree(tmp_path: Path) -> None:
    """Why this module exists: 3.11's os.walk and shutil.rmtree raise RecursionError."""
    make_deep_tree(tmp_path / "tree", 1_500)
    with pytest.raises(RecursionError):
        list(os.walk(tmp_path / "tree"))
    with pytest.raises(RecursionError):
        shutil.rmtree(tmp_path / "tree")
    remove_tree(tmp_path / "tree")


def test_a_deep_tree_is_removed_whole(tmp_path: Path) -> None:
    depth = 2_100  # past the recursion limit, and past PATH_MAX in bytes
    make_deep_tree(tmp_path / "tree", depth)
    (tmp_path / "keep.txt").write_text("kept\n")

    removed = remove_tree(tmp_path / "tree")

    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
    assert len(removed) == depth + 2  # each folder, the tree itself and the leaf file
    assert "tree/" in removed
    assert "/".join(["tree", *["d"] * depth, "leaf.txt"]) in removed


def test_a_deep_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    make_deep_tree(tmp_path / "tree", 150)
    assert len(list(walk_tree(tmp_path / "tree"))) == 152
    make_deep_tree(tmp_path / "deep", 1_500)
    assert sum(1 for _ in walk_tree(tmp_path / "deep")) > 1_000  # no RecursionError
    remove_tree(tmp_path / "deep")


def test_what_is_removed_is_named_and_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f.txt").write_text("x\n")
    (tree / "top.txt").write_text("x\n")
    (tree / "link").symlink_to(outside, target_is_directory=True)
    os.mkfifo(tree / "a" / "pipe")

    removed = remove_tree(tree)

    assert sorted(removed) == sorted(
        [
            "tree/",
            "tree/a/",
            "tree/a/b/",
            "tree/a/b/f.txt",
            "tree/a/pipe",
            "tree/top.txt",
            "tree/link",
        ]
    )
    assert not tree.exists()
    assert (outside / "secret.txt").read_text() == "outside\n"


def test_a_file_or_a_link_is_removed_itself(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target", target_is_directory=True)
    (tmp_path / "file").write_text("x")
    assert remove_tree(tmp_path / "link") == ["link"]
    assert remove_tree(tmp_path / "file") == ["file"]
    assert (tmp_path / "target").is_dir()


def test_discarding_what_is_not_there_is_no_error(tmp_path: Path) -> None:
    discard_tree(tmp_path / "missing")
    with pytest.raises(FileNotFoundError):
        remove_tree(tmp_path / "missing")


def test_a_walk_lists_parents_first_and_does_not_enter_links(tmp_path: Path) -> None:
    (tmp_path / "outside" / "inner").mkdir(parents=True)
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "f").write_text("x")
    (tree / "link").symlink_to(tmp_path / "outside", target_is_directory=True)

    walked = [p.relative_to(tmp_path).as_posix() for p in walk_tree(tree)]

    assert walked[0] == "tree"
    assert walked.index("tree/a") < walked.index("tree/a/f")
    assert sorted(walked) == ["tree", "tree/a", "tree/a/f", "tree/link"]
    assert list(walk_tree(tmp_path / "missing")) == []
