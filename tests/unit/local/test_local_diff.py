"""``git diff BASE...HEAD`` → GitHub's file list, on real repositories built here: statuses,
renames, binary files, patches exactly as ``git diff`` prints them minus the headers; the
contents at head and base; what a developer's git config must not change; one-line errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memory_action.errors import InputError
from memory_action.github.pull_request import ChangedFile
from memory_action.local.git_diff import (
    LocalChange,
    hunks_of,
    open_change,
    parse_raw,
    split_patches,
    to_changed_files,
)
from memory_action.maintenance.git_checkout import GitCheckout
from tests.fakes.git_repo import (
    ACCENTED,
    APP_AFTER,
    APP_BEFORE,
    AUTHOR,
    BODY,
    GUIDE,
    MANUAL,
    TITLE,
    GitRepo,
)


def change_of(repo: GitRepo, env: dict[str, str], base: str | None = "main") -> LocalChange:
    return open_change(repo.root, base, env)


def by_path(files: list[ChangedFile]) -> dict[str, ChangedFile]:
    return {f.path: f for f in files}


def git_patch(repo: GitRepo, *paths: str) -> str:
    """What ``git diff main...HEAD`` prints for ``paths``, from the first hunk on."""
    printed = repo.git("diff", "--find-renames", "main...HEAD", "--", *paths)
    return printed[printed.index("@@ ") :].removesuffix("\n")


def numstat(repo: GitRepo) -> dict[str, tuple[int, int]]:
    """``git diff --numstat`` per (new) path; binary files count 0/0, as GitHub counts them."""
    counts: dict[str, tuple[int, int]] = {}
    out = repo.git("diff", "--numstat", "-z", "--find-renames", "main...HEAD")
    fields = out.split("\0")
    index = 0
    while index < len(fields) - 1:
        added, removed, path = fields[index].split("\t")
        if not path:  # a rename: the old and new paths follow
            path, index = fields[index + 2], index + 3
        else:
            index += 1
        counts[path] = (int(added) if added != "-" else 0, int(removed) if removed != "-" else 0)
    return counts


# -- the file list ----------------------------------------------------------------------------


def test_statuses_renames_and_binary_files_as_github_lists_them(
    repo: GitRepo, env: dict[str, str]
) -> None:
    files = change_of(repo, env).changed_files()

    assert [(f.path, f.status, f.previous_path) for f in files] == [
        ("assets/logo.bin", "added", None),
        ("docs/manual.md", "renamed", "docs/guide.md"),
        (ACCENTED, "added", None),
        ("old.txt", "removed", None),
        ("src/app.py", "modified", None),
    ]
    assert by_path(files)["assets/logo.bin"].patch is None  # binary: no patch, like GitHub


def test_only_the_change_since_the_merge_base_is_listed(repo: GitRepo, env: dict[str, str]) -> None:
    """main changed README.md after the branch: a three-dot diff leaves it out."""
    assert "README.md" not in by_path(change_of(repo, env).changed_files())


def test_patches_are_what_git_diff_prints_without_the_headers(
    repo: GitRepo, env: dict[str, str]
) -> None:
    files = by_path(change_of(repo, env).changed_files())

    assert files["src/app.py"].patch == git_patch(repo, "src/app.py")
    assert files["docs/manual.md"].patch == git_patch(repo, "docs/guide.md", "docs/manual.md")
    assert files["old.txt"].patch == "@@ -1 +0,0 @@\n-to be deleted"
    assert files[ACCENTED].patch == "@@ -0,0 +1 @@\n+accented"
    for changed in files.values():
        assert changed.patch is None or not changed.patch.startswith(("diff --git", "---"))


def test_additions_and_deletions_match_git_numstat(repo: GitRepo, env: dict[str, str]) -> None:
    files = change_of(repo, env).changed_files()

    assert {f.path: (f.additions, f.deletions) for f in files} == numstat(repo)
    assert by_path(files)["src/app.py"].deletions == 2


def test_a_pure_rename_and_a_mode_change_have_no_patch(tmp_path: Path, env: dict[str, str]) -> None:
    repo = GitRepo(tmp_path / "plain", env)
    repo.git("init", "--quiet", "--initial-branch=main")
    repo.write("a.txt", GUIDE)
    repo.write("run.sh", "echo hi\n")
    repo.commit("Start")
    repo.git("switch", "--quiet", "--create", "topic")
    repo.git("mv", "a.txt", "b.txt")
    (repo.root / "run.sh").chmod(0o755)
    repo.commit("Rename and make executable")

    files = by_path(open_change(repo.root, "main", env).changed_files())

    assert files["b.txt"] == ChangedFile(
        path="b.txt", status="renamed", additions=0, deletions=0, patch=None, previous_path="a.txt"
    )
    assert files["run.sh"] == ChangedFile(
        path="run.sh", status="changed", additions=0, deletions=0, patch=None
    )


def test_a_developers_diff_config_changes_nothing(repo: GitRepo, env: dict[str, str]) -> None:
    """Renames off, more context, merged hunks, colour, an external diff tool, a textconv
    filter: GitHub's comparison has none of them, so neither does ours."""
    expected = change_of(repo, env).changed_files()
    for key, value in (
        ("diff.renames", "false"),
        ("diff.context", "8"),
        ("diff.interHunkContext", "20"),
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("diff.external", "false"),
        ("diff.upper.textconv", "tr a-z A-Z"),
    ):
        repo.git("config", key, value)
    (repo.root / ".git" / "info" / "attributes").write_text("* diff=upper\n")

    assert change_of(repo, env).changed_files() == expected


@pytest.mark.parametrize(
    "attributes",
    [
        "*.py -diff\n",
        "*.py binary\n",
        "* -diff\n",
        "*.py diff=upper\n",  # a driver the developer's config defines
        "[attr]hidden -diff -merge -text\n*.py hidden\n",  # a macro of its own
    ],
)
@pytest.mark.parametrize("where", [".gitattributes", "src/.gitattributes"])
def test_the_branchs_own_gitattributes_cannot_hide_its_change(
    repo: GitRepo, env: dict[str, str], attributes: str, where: str
) -> None:
    """git reads attributes from the files checked out, which the branch under review wrote: a
    ``*.py -diff`` there would make its change "Binary files differ", with nothing to review."""
    repo.git("config", "diff.upper.binary", "true")
    expected = by_path(change_of(repo, env).changed_files())["src/app.py"]
    assert expected.patch is not None
    repo.write(where, attributes)
    repo.commit("Attributes")

    files = by_path(change_of(repo, env).changed_files())
    assert files["src/app.py"] == expected
    assert files["assets/logo.bin"].patch is None  # a binary file is still one


# -- parsing, on git's own bytes ----------------------------------------------------------------


def test_parse_raw_reads_renames_and_mode_changes() -> None:
    zero, sha = "0" * 40, "1" * 40
    raw = (
        f":100644 100644 {sha} {sha} R086\0old name.md\0new name.md\0"
        f":000000 100644 {zero} {sha} A\0added.txt\0"
        f":100644 100755 {sha} {sha} M\0run.sh\0"
        f":100644 000000 {sha} {zero} D\0gone.txt\0"
    ).encode()

    changes = parse_raw(raw)

    assert [(c.letter, c.path, c.previous_path, c.mode_changed) for c in changes] == [
        ("R", "new name.md", "old name.md", False),
        ("A", "added.txt", None, False),
        ("M", "run.sh", None, True),
        ("D", "gone.txt", None, False),
    ]


def test_split_patches_cuts_at_each_file_header_only() -> None:
    first = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-diff --git old\n+new\n"
    second = b"diff --git a/y b/y\nBinary files a/y and b/y differ\n"

    assert split_patches(first + second) == [first, second]
    assert split_patches(b"") == []
    with pytest.raises(ValueError, match="diff --git"):
        split_patches(b"warning: something else\n")


def test_hunks_count_lines_and_keep_no_newline_markers() -> None:
    chunk = (
        b"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n"
        b"@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n"
        b"\\ No newline at end of file\n"
    )

    hunks = hunks_of(chunk)

    assert (hunks.additions, hunks.deletions) == (1, 1)
    assert hunks.patch == (
        "@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n"
        "\\ No newline at end of file"
    )
    assert hunks_of(b"diff --git a/y b/y\nBinary files a/y and b/y differ\n").patch is None


def test_a_file_list_and_patches_that_disagree_are_refused() -> None:
    raw = f":100644 100644 {'1' * 40} {'2' * 40} M\0x\0".encode()

    with pytest.raises(ValueError, match="1 changed files but 0 patches"):
        to_changed_files(raw, b"")


# -- contents and the pull request's description ----------------------------------------------


def test_file_contents_at_head_and_at_base(repo: GitRepo, env: dict[str, str]) -> None:
    change = change_of(repo, env)

    assert change.file_content("src/app.py") == APP_AFTER
    assert change.base_file_content("src/app.py") == APP_BEFORE
    assert change.file_content("docs/manual.md") == MANUAL
    assert change.file_content("docs/guide.md") is None  # renamed away at head
    assert change.base_file_content("docs/guide.md") == GUIDE
    assert change.file_content(ACCENTED) == "accented\n"
    # The base is main's tip, as GitHub's base.sha is: main's later README is read there.
    assert change.base_file_content("README.md") == "# demo\n\nChanged on main after the branch.\n"


@pytest.mark.parametrize(
    "path",
    ["assets/logo.bin", "missing.py", "src", "src/", ":(top)src/app.py", "src/*.py", "link"],
)
def test_only_regular_text_files_are_read(repo: GitRepo, env: dict[str, str], path: str) -> None:
    (repo.root / "link").symlink_to("src/app.py")
    repo.commit("A symlink")

    assert change_of(repo, env).file_content(path) is None


def test_files_over_the_size_limit_are_not_read(repo: GitRepo, env: dict[str, str]) -> None:
    git = GitCheckout.find(repo.root, env)
    size = len(APP_AFTER.encode())

    assert git.read_blob("HEAD", "src/app.py", max_bytes=size) == APP_AFTER.encode()
    assert git.read_blob("HEAD", "src/app.py", max_bytes=size - 1) is None


def test_info_comes_from_the_head_commit(repo: GitRepo, env: dict[str, str]) -> None:
    change = change_of(repo, env)
    info = change.info()

    assert (info.number, info.title, info.body, info.author) == (0, TITLE, BODY, AUTHOR[0])
    assert (info.head_ref, info.base_ref) == ("feature", "main")
    assert info.head_sha == repo.git("rev-parse", "feature").strip()
    assert info.base_sha == repo.git("rev-parse", "main").strip()
    assert info.html_url == ""


def test_a_detached_head_is_named_by_its_sha(repo: GitRepo, env: dict[str, str]) -> None:
    repo.git("switch", "--quiet", "--detach", "feature")

    info = change_of(repo, env).info()

    assert info.head_ref == info.head_sha


# -- the base, and what is refused --------------------------------------------------------------


def test_the_default_base_is_origin_head_before_main(repo: GitRepo, env: dict[str, str]) -> None:
    start = repo.git("rev-parse", "main~1").strip()
    repo.git("update-ref", "refs/remotes/origin/trunk", start)
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")

    assert change_of(repo, env, base=None).base == "origin/trunk"


def test_without_origin_the_default_base_is_main_then_master(
    repo: GitRepo, env: dict[str, str]
) -> None:
    assert change_of(repo, env, base=None).base == "main"
    repo.git("branch", "--quiet", "--move", "main", "master")
    assert change_of(repo, env, base=None).base == "master"


def one_line_error(folder: Path, base: str | None, env: dict[str, str]) -> str:
    with pytest.raises(InputError) as raised:
        open_change(folder, base, env)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_no_default_branch_asks_for_base(repo: GitRepo, env: dict[str, str]) -> None:
    repo.git("branch", "--quiet", "--move", "main", "trunk")

    message = one_line_error(repo.root, None, env)

    assert message.startswith("No base branch found in ")
    assert "pass --base REF" in message


def test_outside_a_checkout(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    env = {**env, "GIT_CEILING_DIRECTORIES": str(tmp_path)}

    message = one_line_error(folder, None, env)

    assert message.startswith(f"{folder} is not inside a git checkout (fatal: not a git repo")


@pytest.mark.parametrize("base", ["nope", "main~99", "-p", ""])
def test_a_base_that_names_no_commit(repo: GitRepo, env: dict[str, str], base: str) -> None:
    assert "--base" in one_line_error(repo.root, base, env)


def test_an_empty_diff(repo: GitRepo, env: dict[str, str]) -> None:
    message = one_line_error(repo.root, "feature", env)

    assert message.startswith("Nothing to review: git diff feature...HEAD is empty")


def test_unrelated_histories(repo: GitRepo, env: dict[str, str]) -> None:
    repo.git("switch", "--quiet", "--orphan", "island")
    repo.commit("Unrelated")

    assert "share no history" in one_line_error(repo.root, "main", env)


def test_no_commit_yet(tmp_path: Path, env: dict[str, str]) -> None:
    repo = GitRepo(tmp_path / "new", env)
    repo.git("init", "--quiet", "--initial-branch=main")

    assert one_line_error(repo.root, "HEAD", env).startswith("--base HEAD names no commit")


def test_without_git(repo: GitRepo, env: dict[str, str], tmp_path: Path) -> None:
    message = one_line_error(repo.root, "main", {**env, "PATH": str(tmp_path / "empty")})

    assert message == "git is not installed (or not on PATH): install git."


def test_a_git_that_hangs_is_stopped(
    repo: GitRepo, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[float] = []

    def hang(*args: object, timeout: float, **kwargs: object) -> None:
        seen.append(timeout)
        raise subprocess.TimeoutExpired("git", timeout)

    monkeypatch.setattr(subprocess, "run", hang)

    message = one_line_error(repo.root, "main", env)

    assert seen == [60.0]
    assert message == f"git rev-parse did not finish within 60 s in {repo.root}."


@pytest.mark.parametrize("ref", ["--all", "--git-dir", "--show-toplevel"])
def test_a_ref_is_never_read_as_an_option(repo: GitRepo, env: dict[str, str], ref: str) -> None:
    git = GitCheckout.find(repo.root, env)

    assert git.full_ref(ref) == ""
    assert git.commit(ref) is None
    assert git.full_ref("main") == "refs/heads/main"
    assert git.full_ref("main~1") == ""
