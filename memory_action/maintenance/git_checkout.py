"""A local git checkout, read through the ``git`` command: refs, commits, blobs and diffs.

git runs as a subprocess with list arguments (never a shell), a timeout, and options that keep a
developer's configuration from changing what it prints (a pager, quoted paths). Output stays
bytes until the caller decides how to decode it: paths and file contents need not be UTF-8.
Every failure a person can cause (no git, not a repository, an unknown ref) is one
``InputError`` line.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_action.errors import InputError

GIT_TIMEOUT_S = 60.0
# Before the subcommand: no pager; paths as they are, not \-quoted (``-z`` output never quotes
# them either, but a message that names a path stays readable).
_GLOBAL_OPTIONS = ("--no-pager", "-c", "core.quotepath=off")
_MESSAGES_IN_ENGLISH = {"LC_ALL": "C"}  # git's reasons are quoted in our one-line errors
DEFAULT_BRANCH_CANDIDATES = ("origin/HEAD", "main", "master")
_GITHUB_REMOTE = re.compile(r"github\.com[:/]+([^/\s]+/[^/\s]+?)(?:\.git)?/?$")
_REGULAR_FILE_MODES = (b"100644", b"100755")


@dataclass(frozen=True, kw_only=True)
class GitResult:
    code: int
    out: bytes
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def reason(self) -> str:
        """git's own one-line explanation of a failure."""
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
        return (fatal or lines or [f"exit code {self.code}"])[0]


@dataclass(frozen=True, kw_only=True)
class RegularFile:
    blob: str  # the object id
    size: int  # bytes


class GitCheckout:
    """One repository's work tree; every method runs git at its top-level folder."""

    def __init__(self, root: Path, env: Mapping[str, str], timeout_s: float = GIT_TIMEOUT_S):
        self.root = root
        self._env = {**env, **_MESSAGES_IN_ENGLISH}
        self._timeout_s = timeout_s

    @classmethod
    def find(
        cls, folder: Path, env: Mapping[str, str], timeout_s: float = GIT_TIMEOUT_S
    ) -> GitCheckout:
        """The checkout ``folder`` is in; an InputError when there is none."""
        probe = cls(folder, env, timeout_s)
        found = probe.attempt("rev-parse", "--show-toplevel")
        if not found.ok:
            raise InputError(
                f"{folder} is not inside a git checkout ({found.reason}): run "
                "`memory-agent review --local` in the work tree of the repository to review."
            )
        return cls(Path(os.fsdecode(found.out.rstrip(b"\n"))), env, timeout_s)

    def attempt(
        self, *args: str, cwd: Path | None = None, stdin: bytes = b"", **env: str
    ) -> GitResult:
        """Run ``git <args>``; a missing git or a timeout is an InputError, any exit code is not.
        ``cwd`` and ``env`` (variables on top of the checkout's) for ``run_without_attributes``;
        ``stdin`` for ``read_blobs``."""
        command = ["git", *_GLOBAL_OPTIONS, *args]
        try:
            done = subprocess.run(  # noqa: S603 - list arguments, no shell
                command,
                cwd=cwd or self.root,
                env={**self._env, **env},
                input=stdin,
                capture_output=True,
                timeout=self._timeout_s,
                check=False,
            )
        except FileNotFoundError:
            raise InputError("git is not installed (or not on PATH): install git.") from None
        except subprocess.TimeoutExpired:
            raise InputError(
                f"git {args[0]} did not finish within {self._timeout_s:.0f} s in {self.root}."
            ) from None
        return GitResult(
            code=done.returncode, out=done.stdout, err=done.stderr.decode("utf-8", "replace")
        )

    def run(self, *args: str, stdin: bytes = b"") -> bytes:
        """Run ``git <args>``; its output, or an InputError quoting git's reason."""
        return self._output(args, self.attempt(*args, stdin=stdin))

    def run_without_attributes(self, *args: str) -> bytes:
        """``run``, reading no ``.gitattributes`` of the work tree or the index.

        git takes attributes from the checked-out files, which the branch under review wrote:
        its ``*.py -diff`` or ``binary`` would show its own change as "Binary files differ".
        Run from an empty work tree with an empty index, git sees none of them (git 2.40's
        ``--attr-source`` would do the same; older gits are common). The repository's own
        ``info/attributes`` and the developer's ``core.attributesFile`` still apply: no branch
        can write those."""
        git_dir = os.fsdecode(self.run("rev-parse", "--absolute-git-dir").rstrip(b"\n"))
        with tempfile.TemporaryDirectory(prefix="memory-agent-git-") as scratch:
            empty = Path(scratch)
            result = self.attempt(
                *args,
                cwd=empty,
                GIT_DIR=git_dir,
                GIT_WORK_TREE=scratch,
                GIT_INDEX_FILE=str(empty / "index"),  # none: an empty index
            )
        return self._output(args, result)

    def _output(self, args: tuple[str, ...], result: GitResult) -> bytes:
        if not result.ok:
            raise InputError(f"git {args[0]} failed in {self.root}: {result.reason}")
        return result.out

    def commit(self, ref: str) -> str | None:
        """The commit ``ref`` names (a branch, tag, sha, ``HEAD~2``…), or None.

        ``--verify`` takes exactly one revision: a ref that looks like an option (``--all``)
        names nothing instead of changing what git prints."""
        found = self.attempt("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return found.out.decode("ascii").strip() if found.ok else None

    def full_ref(self, ref: str) -> str:
        """``refs/heads/x``, ``refs/remotes/origin/x``… for a ref; "" for a sha or an expression."""
        found = self.attempt("rev-parse", "--verify", "--quiet", "--symbolic-full-name", ref)
        return os.fsdecode(found.out.strip()) if found.ok else ""

    def current_branch(self) -> str | None:
        """The branch HEAD is on; None when HEAD is detached."""
        found = self.attempt("symbolic-ref", "--quiet", "--short", "HEAD")
        return os.fsdecode(found.out.strip()) if found.ok and found.out.strip() else None

    def default_branch(self) -> str | None:
        """The upstream default branch (``origin/HEAD``, named as what it points to, e.g.
        ``origin/main``), else ``main``, else ``master``."""
        found = next((c for c in DEFAULT_BRANCH_CANDIDATES if self.commit(c) is not None), None)
        if found is None:
            return None
        short = self.attempt("rev-parse", "--verify", "--quiet", "--abbrev-ref", found)
        return os.fsdecode(short.out.strip()) if short.ok and short.out.strip() else found

    def default_base(self) -> str:
        """``default_branch``, or an InputError asking for ``--base``."""
        found = self.default_branch()
        if found is not None:
            return found
        raise InputError(
            f"No base branch found in {self.root} (no origin/HEAD, main or master): "
            "pass --base REF, e.g. --base develop or --base HEAD~3."
        )

    def merge_base(self, first: str, second: str) -> str | None:
        """The best common ancestor of two commit shas (``commit``'s answers), or None."""
        found = self.attempt("merge-base", first, second)
        return found.out.decode("ascii").strip() if found.ok else None

    def github_repository(self) -> str | None:
        """``owner/name`` when the ``origin`` remote is on GitHub."""
        found = self.attempt("config", "--get", "remote.origin.url")
        match = _GITHUB_REMOTE.search(os.fsdecode(found.out.strip())) if found.ok else None
        return match.group(1) if match else None

    def read_blob(self, commit: str, path: str, max_bytes: int) -> bytes | None:
        """A regular file's bytes at ``commit``; None for a missing path, a folder, a symlink,
        a submodule or a file over ``max_bytes``."""
        listing = self.attempt("ls-tree", "-l", "-z", "--full-tree", commit, "--", path)
        if not listing.ok:
            return None
        for entry in listing.out.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            # Only the entry named exactly: "src/" lists the folder's files, ":(top)x" is magic.
            fields = meta.split()
            if name != os.fsencode(path) or len(fields) != 4:
                continue
            mode, kind, obj, size = fields
            if kind != b"blob" or mode not in _REGULAR_FILE_MODES or int(size) > max_bytes:
                return None
            blob = self.attempt("cat-file", "blob", obj.decode("ascii"))
            return blob.out if blob.ok else None
        return None

    def regular_files(self, commit: str) -> dict[str, RegularFile]:
        """Every regular file of ``commit`` (no folder, symlink or submodule), by path."""
        listing = self.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        found: dict[str, RegularFile] = {}
        for entry in listing.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            fields = meta.split()
            if len(fields) == 4 and fields[1] == b"blob" and fields[0] in _REGULAR_FILE_MODES:
                found[os.fsdecode(name)] = RegularFile(
                    blob=fields[2].decode("ascii"), size=int(fields[3])
                )
        return found

    def read_blobs(self, blobs: list[str]) -> dict[str, bytes]:
        """The bytes of each blob (by object id), all through one ``git cat-file --batch``: a
        process per file cost more than the rest of a maintenance run."""
        wanted = list(dict.fromkeys(blobs))
        if not wanted:
            return {}
        out = self.run("cat-file", "--batch", stdin="".join(f"{b}\n" for b in wanted).encode())
        found: dict[str, bytes] = {}
        position = 0
        for blob in wanted:  # each answer: "<id> blob <size>\n<bytes>\n", or "<id> missing\n"
            end = out.index(b"\n", position)
            header = out[position:end].split()
            position = end + 1
            if len(header) == 3 and header[1] == b"blob":
                size = int(header[2])
                found[blob] = out[position : position + size]
                position += size + 1
        return found
