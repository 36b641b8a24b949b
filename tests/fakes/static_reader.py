"""A ``PullRequestReader`` over data held in memory, for engine tests that need no GitHub."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_action.github.pull_request import ChangedFile, PullRequestInfo

INFO = PullRequestInfo(
    number=7,
    title="Add a retry to the fetcher",
    body="Retries flaky downloads.",
    author="mona",
    html_url="https://github.com/octo-org/octo-repo/pull/7",
    head_sha="6dcb09b5b57875f334f61aebed695e2e4193db5e",
    head_ref="retry-fetcher",
    base_ref="main",
    base_sha="1" * 40,
)


@dataclass
class StaticPullRequest:
    files: list[ChangedFile]
    head: dict[str, str] = field(default_factory=dict)  # path → text at the head commit
    base: dict[str, str] = field(default_factory=dict)  # path → text at the base commit
    pr: PullRequestInfo = INFO

    def info(self) -> PullRequestInfo:
        return self.pr

    def changed_files(self) -> list[ChangedFile]:
        return list(self.files)

    def file_content(self, path: str) -> str | None:
        return self.head.get(path)

    def base_file_content(self, path: str) -> str | None:
        return self.base.get(path)


def added_file(path: str, lines: int, *, width: int = 40) -> ChangedFile:
    """A new file of ``lines`` lines, each about ``width`` characters."""
    body = "".join(f"+line {n:04d} " + "x" * (width - 11) + "\n" for n in range(1, lines + 1))
    return ChangedFile(
        path=path,
        status="added",
        additions=lines,
        deletions=0,
        patch=f"@@ -0,0 +1,{lines} @@\n{body}",
    )
