"""Real git repositories built in a test's folder, with no developer configuration in reach.

``isolated_git_env`` is the environment every git of a test runs with (the code under test too,
through ``monkeypatch``): no global or system config, and a home folder of the test's own.
``feature_repository`` builds the change most tests review: on branch ``feature`` off ``main``,
an edit, a rename with an edit, a deletion, a binary file and a name with a space and an accent;
``main`` then moves on, so a two-dot diff would differ from the three-dot one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AUTHOR = ("Ada Tester", "ada@example.com")
TITLE = "Retry the fetch three times"
BODY = "A flaky network made the nightly job fail.\n\nSecond paragraph."
APP_BEFORE = "".join(f"line {n}\n" for n in range(1, 21))
APP_AFTER = APP_BEFORE.replace("line 3\n", "line three\n").replace("line 18\n", "")
GUIDE = "".join(f"Guide paragraph {n}.\n" for n in range(1, 31))
MANUAL = GUIDE.replace("Guide paragraph 30.", "Manual paragraph 30.")
BINARY = bytes(range(256))
ACCENTED = "notes/é t.txt"


def isolated_git_env(home: Path) -> dict[str, str]:
    """Variables that keep git away from every config but the repository's own."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


class GitRepo:
    """A work tree driven by the ``git`` command, as a developer would."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = {**os.environ, **env}
        root.mkdir(parents=True, exist_ok=True)

    def git(self, *args: str) -> str:
        name, email = AUTHOR
        done = subprocess.run(
            ["git", "-c", f"user.name={name}", "-c", f"user.email={email}", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            check=True,
            timeout=60,
        )
        return done.stdout.decode("utf-8", "replace")

    def write(self, path: str, content: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def commit(self, message: str) -> str:
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


def feature_repository(root: Path, env: dict[str, str]) -> GitRepo:
    repo = GitRepo(root, env)
    repo.git("init", "--quiet", "--initial-branch=main")
    repo.write("src/app.py", APP_BEFORE)
    repo.write("docs/guide.md", GUIDE)
    repo.write("old.txt", "to be deleted\n")
    repo.write("README.md", "# demo\n")
    repo.commit("Start")
    repo.git("switch", "--quiet", "--create", "feature")
    repo.write("src/app.py", APP_AFTER)
    repo.git("mv", "docs/guide.md", "docs/manual.md")
    repo.write("docs/manual.md", MANUAL)
    repo.git("rm", "--quiet", "old.txt")
    repo.write("assets/logo.bin", BINARY)
    repo.write(ACCENTED, "accented\n")
    repo.commit(f"{TITLE}\n\n{BODY}")
    repo.git("switch", "--quiet", "main")
    repo.write("README.md", "# demo\n\nChanged on main after the branch.\n")
    repo.commit("Main moves on")
    repo.git("switch", "--quiet", "feature")
    return repo
