"""``ask_write_access``: GitHub's permission answer read through a pydantic model, and any failed
look-up is not allowed, with how it failed (what the run's one warning line says)."""

from __future__ import annotations

from typing import Any

import pytest
from github import GithubException

from memory_action.github.after_merge import WriteAccess, ask_write_access
from memory_action.github.api import RepositoryApi

TOKEN = "ghs_" + "p3rm1ss10n" * 4


class _Requester:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def requestJsonAndCheck(self, _verb: str, _url: str) -> tuple[dict[str, str], Any]:  # noqa: N802 - PyGithub's name
        if isinstance(self.answer, Exception):
            raise self.answer
        return {}, self.answer


class _Repository:
    url = "https://api.github.com/repos/octo-org/octo-repo"

    def __init__(self, answer: object) -> None:
        self.requester = _Requester(answer)


def asked(answer: object) -> WriteAccess:
    """What ``ask_write_access`` makes of ``answer`` (PyGithub's parsed JSON, or what it raises)."""
    api = RepositoryApi(
        TOKEN, "https://api.github.com", "octo-org/octo-repo", retries=0, timeout_seconds=5
    )
    api.__dict__["repository"] = _Repository(answer)  # the cached PyGithub handle, stubbed
    return ask_write_access(api, "mona")


@pytest.mark.parametrize(
    ("answer", "allowed"),
    [
        ({"permission": "write", "role_name": "write"}, True),
        ({"permission": "read", "role_name": "maintain"}, True),  # a custom role on top of read
        ({"permission": "admin"}, True),
        ({"permission": "read", "role_name": "triage"}, False),
    ],
)
def test_an_answer_of_githubs_shape_decides(answer: dict[str, str], allowed: bool) -> None:
    access = asked(answer)
    assert (access.allowed, access.problem) == (allowed, "")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"permission": ["write"]},
            "GitHub's answer is not a permission: permission: Input should be a valid string",
        ),
        ({"permission": "read", "role_name": 3}, "role_name: Input should be a valid string"),
        ({"data": "<html>"}, "permission: Field required"),  # PyGithub's wrapping of non-JSON
        (["write"], "the answer: Input should be a valid dictionary"),
        (None, "the answer: Input should be a valid dictionary"),
        (GithubException(500, {"message": "boom"}, {}), "HTTP 500 boom"),
        (ValueError("bad " + TOKEN), "failed: ValueError('bad ***')"),  # one line, no token
    ],
)
def test_a_failed_look_up_is_not_allowed_and_says_how(answer: object, problem: str) -> None:
    access = asked(answer)
    assert not access.allowed
    assert problem in access.problem
    assert access.reason == f"whose permission GitHub did not tell ({access.problem})"
    assert "\n" not in access.problem and TOKEN not in access.problem
