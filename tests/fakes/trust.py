"""A ``TrustLookup`` answering from two tables, recording what it was asked."""

from __future__ import annotations

from dataclasses import dataclass, field

REPOSITORY = "octo-org/octo-repo"


@dataclass
class FakeTrustLookup:
    writers: set[str] = field(default_factory=lambda: {"mona", "hubot"})
    heads: dict[int, str | None] = field(default_factory=dict)  # PR → head repo; else ours
    asked: list[str] = field(default_factory=list)

    def has_write_access(self, login: str) -> bool:
        self.asked.append(f"permission {login}")
        return login in self.writers

    def head_repository(self, pr_number: int) -> str | None:
        self.asked.append(f"head #{pr_number}")
        return self.heads.get(pr_number, REPOSITORY)
