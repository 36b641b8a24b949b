"""The action's log gets one line per model request, inside the agent's log group."""

from __future__ import annotations

from tests.fakes.github_api import FakeGitHub
from tests.fakes.runner import ActionRunner, pull_request_event
from tests.integration.test_action_run import PR_REF, github, learning_model

__all__ = ["github"]  # fixtures


def test_each_model_request_is_one_line_of_the_log(
    runner: ActionRunner, github: FakeGitHub
) -> None:
    del github
    outcome = runner.run("pull_request", pull_request_event(), PR_REF, learning_model())

    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    log = outcome.stdout.splitlines()
    requests = [line for line in log if line.startswith("Model request ")]
    assert [line.split(" · ")[0] for line in requests] == [
        "Model request 1 of 1",
        "Model request 2 of 2",
        "Model request 3 of 3",
    ]
    assert all(" · batch 1 of 1 · 1 file · ~" in line for line in requests)
    group = log.index(next(line for line in log if line.startswith("::group::Run the agent")))
    assert group < log.index(requests[0]) < log.index("::endgroup::", group)
