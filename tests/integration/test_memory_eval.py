"""``memory-agent eval``'s fixture tier through the command line: every target met, with the
no-memory baseline printed in the same run and the GitHub fake checked against GitHub's
published descriptions."""

from __future__ import annotations

import re

import pytest

from memory_action import cli
from memory_action.evaluation.reviewer import GullibleReviewer, Planted, not_to_flag


def test_the_fixture_tier_meets_every_target_and_prints_its_baselines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["eval"])

    table = capsys.readouterr().out
    assert code == 0, table
    rows = {line.split("  ")[0]: line for line in table.splitlines()}
    dismissed = rows["a dismissed finding raised again on a later PR"]
    # target, memory (2 writer dismissals x 3 distances), the no-memory baseline, the verdict
    assert re.search(r"≤ 2%\s+0% \(0/6\)\s+100% \(6/6\)\s+met$", dismissed), dismissed
    controls = rows["over-suppression: a control finding not raised"]
    assert re.search(r"≤ 5%\s+0% \(0/24\)\s+0% \(0/12\)\s+met$", controls), controls
    others = rows["a non-writer's dismissal holding a finding back"]
    assert re.search(r"0%\s+0% \(0/6\)\s+—\s+met$", others), others
    assert "GitHub contract: 0 violations." in table
    assert "MISSED" not in table


def test_a_missed_target_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory not read: the reviewer repeats the dismissed finding, as without memory."""
    monkeypatch.setattr("memory_action.evaluation.reviewer.not_to_flag", lambda _m: frozenset())

    code = cli.main(["eval", "--quick"])

    table = capsys.readouterr().out
    assert code == 1, table
    assert re.search(r"raised again on a later PR\s+≤ 2%\s+100% \(2/2\).*MISSED$", table, re.M)


def test_bad_usage_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        cli.main(["eval", "--fast"])

    assert ended.value.code == 2
    assert "unrecognized arguments: --fast" in capsys.readouterr().err


def test_without_the_eval_extra_it_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "memory_action.evaluation.command", None)

    code = cli.main(["eval"])

    [line] = capsys.readouterr().err.splitlines()
    assert code == 2
    assert "pip install 'memory-agent[eval]'" in line


def test_the_reviewer_skips_only_what_memory_names() -> None:
    memory = '- Review: do not flag "Broad except" in src/a.py, because it is on purpose. (@m)'
    assert not_to_flag(memory) == {("Broad except", "src/a.py")}
    planted = [
        Planted(path="src/a.py", line=3, title="Broad except"),
        Planted(path="src/b.py", line=3, title="Broad except"),
    ]
    reviewer = GullibleReviewer(planted=planted)
    reviewer.bind_tools([{"name": "report_review"}])
    system = f"You review.\n<agent_memory>\n{memory}\n</agent_memory>"
    reviewer.invoke([("system", system), ("human", "### src/a.py\n### src/b.py")])
    assert reviewer.reported == [planted[1]]
    assert reviewer.skipped == [planted[0]]
