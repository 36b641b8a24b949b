"""``local.repository``: every way of cloning one repository names it the same, credentials never
reach a key, and the store seen as one repository's reaches nothing outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_action.local.repository import (
    RepositoryStore,
    pull_request_repository,
    remote_identity,
    repository_of_key,
)
from memory_action.store.base import RestoreKeys
from memory_action.store.local import LocalDirectoryStore


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:octo/demo.git",
        "git@github.com:Octo/Demo",
        "https://github.com/octo/demo.git",
        "https://github.com/octo/demo/",
        "https://x-access-token:ghp_secret@github.com/octo/demo.git",
        "ssh://git@github.com:22/octo/demo.git",
        "ssh://git@GitHub.com/octo/demo",
    ],
)
def test_every_url_of_a_repository_names_it_the_same(url: str) -> None:
    assert remote_identity(url) == "github.com/octo/demo"


@pytest.mark.parametrize("url", ["/srv/git/demo.git", "../demo", "file:///srv/git/demo.git", ""])
def test_a_remote_on_this_machine_names_no_repository(url: str) -> None:
    assert remote_identity(url) is None


def test_a_pull_request_is_the_same_repository_as_its_clone() -> None:
    assert pull_request_repository("Octo/Demo") == remote_identity("git@github.com:octo/demo")
    assert pull_request_repository("o/n", "https://ghe.example.com") == "ghe.example.com/o/n"


def test_a_key_says_whose_it_is() -> None:
    assert repository_of_key("github.com%2Focto%2Fdemo/memory-agent/v1/a/repo/x") == (
        "github.com/octo/demo"
    )
    assert repository_of_key("memory-agent/v1/memory-agent/repo/committed/1") is None


def test_one_repository_reads_and_lists_only_its_own_entries(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path / "store")
    folder = tmp_path / "memory"
    folder.mkdir()
    key = "memory-agent/v1/memory-agent/repo/committed/1-1"
    for owner in ("demo", "other"):
        (folder / "AGENTS.md").write_text(f"- {owner}\n")
        assert (
            RepositoryStore(store=store, repository=f"github.com/octo/{owner}")
            .save(key, folder)
            .saved
        )
    assert store.save(key, folder).saved  # an entry from before keys named a repository
    demo = RepositoryStore(store=store, repository="github.com/octo/demo")

    restored = demo.restore(
        RestoreKeys(primary="memory-agent/v1/memory-agent/repo/"), tmp_path / "out"
    )

    assert restored.hit and restored.matched_key == key
    assert (tmp_path / "out" / "AGENTS.md").read_text() == "- demo\n"
    assert [entry.key for entry in demo.entries()] == [key]
    assert demo.read_entry(key)["AGENTS.md"] == "- demo\n"
    assert (
        not RepositoryStore(store=store, repository="github.com/octo/new")
        .restore(RestoreKeys(primary="memory-agent/"), tmp_path / "none")
        .hit
    )


def test_a_restore_key_prefix_reads_only_the_repositorys_own_entries(tmp_path: Path) -> None:
    """The restore keys after the primary one are prefixes too: each is namespaced like the
    primary key, so none reaches another repository's entry or one from before keys named a
    repository (which could be any repository's). No flow passes them today (each layer is
    restored by its primary prefix), so the store's own interface is where they are tried."""
    store = LocalDirectoryStore(tmp_path / "store")
    folder = tmp_path / "memory"
    folder.mkdir()
    key = "memory-agent/v1/memory-agent/repo/committed/1-1"
    (folder / "AGENTS.md").write_text("- other\n")
    other = RepositoryStore(store=store, repository="github.com/octo/other")
    assert other.save(key, folder).saved
    (folder / "AGENTS.md").write_text("- of before\n")
    assert store.save(key, folder).saved
    demo = RepositoryStore(store=store, repository="github.com/octo/demo")
    prefixes = ("memory-agent/v1/memory-agent/repo/", "github.com%2Focto%2Fother/memory-agent/")

    for prefix in prefixes:
        out = tmp_path / f"out-{prefixes.index(prefix)}"
        keys = RestoreKeys(primary="memory-agent/v1/memory-agent/repo/pr-7/", restore=(prefix,))

        restored = demo.restore(keys, out)

        assert not restored.hit, (prefix, restored.matched_key)
        assert not (out / "AGENTS.md").exists()
    (folder / "AGENTS.md").write_text("- demo\n")
    assert demo.save(key, folder).saved
    keys = RestoreKeys(primary="memory-agent/v1/memory-agent/repo/pr-7/", restore=prefixes)
    assert demo.restore(keys, tmp_path / "own").matched_key == key
    assert (tmp_path / "own" / "AGENTS.md").read_text() == "- demo\n"
