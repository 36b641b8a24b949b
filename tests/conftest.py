"""What every test shares: no GitHub fake may have seen a call GitHub would refuse."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_action.evaluation.github import contract as github_contract


@pytest.fixture(autouse=True)
def github_contract_kept() -> Iterator[None]:
    """Fail the test when a GitHub fake saw a request, or gave an answer, that GitHub's published
    OpenAPI description or GraphQL schema refuses (``memory_action.evaluation.github.contract``)."""
    github_contract.take()
    yield
    found = github_contract.take()
    if found:
        listed = "\n".join(f"- {problem}" for problem in dict.fromkeys(found))
        pytest.fail(f"GitHub's published contract refuses:\n{listed}", pytrace=False)
