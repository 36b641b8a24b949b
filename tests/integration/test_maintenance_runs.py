"""Whole maintenance runs on a push to main, over a real git checkout: stale citations,
duplicates and conflict blocks reach the model with their reasons; nothing changed means no
model call at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from memory_action.memory.merge import CONFLICT_END, CONFLICT_MIDDLE, CONFLICT_START
from tests.fakes.git_repo import GitRepo
from tests.fakes.github_api import FakeGitHub
from tests.fakes.maintenance_checkout import (
    checkout_runner,
    maintain,
    seed_without_digest,
    write,
)
from tests.fakes.runner import ActionRunner
from tests.fakes.scripted_model import ScriptedChatModel

KEPT = "- Retries go through `src/app.py:fetch_retry`, never a bare loop.\n"
STALE = "- Settings are parsed in `src/settings.py`.\n"
DUPLICATE = "- Use pytest fixtures rather than setUp methods.\n"
NEAR = "- Use pytest fixtures rather than setUp method.\n"
CONFLICT = (
    f"{CONFLICT_START}\n- Releases are cut on Fridays.\n{CONFLICT_MIDDLE}\n"
    f"- Releases are cut on Mondays.\n{CONFLICT_END}\n"
)
SEEDED = f"# Memory\n{KEPT}{STALE}{DUPLICATE}{NEAR}{CONFLICT}"
CLEAN = f"# Memory\n{KEPT}{DUPLICATE}- Releases are cut on Mondays.\n"


@pytest.fixture(autouse=True)
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as fake:
        yield fake


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ActionRunner:
    return checkout_runner(tmp_path, monkeypatch)


seed = seed_without_digest


def task_of(model: ScriptedChatModel) -> str:
    return "\n".join(str(m.content) for m in model.seen[0] if isinstance(m, HumanMessage))


def test_maintenance_lists_stale_duplicate_and_conflict_then_skips_the_model(
    runner: ActionRunner,
) -> None:
    seed(runner, SEEDED)
    outcome, model = maintain(runner, write(CLEAN), "Removed the stale item, merged the rest.")
    task = task_of(model)
    assert "`src/settings.py` is not in the default branch" in task
    assert STALE.strip() in task
    assert "fetch_retry" not in task.split("no longer backs")[1].split("\n\n")[0]  # backed
    assert "nearly the same thing" in task and NEAR.strip() in task
    assert "Conflict blocks" in task and "Releases are cut on Fridays." in task
    assert "maintenance found stale" in outcome.summary
    assert "-- Settings are parsed" in outcome.summary.replace("\n", "")  # the diff, with reasons

    quiet, silent = maintain(runner)  # an empty script: any model call fails the run
    assert silent.calls == 0
    assert "nothing changed since the last maintenance" in quiet.stdout
    assert quiet.outputs["model_calls"] == "0"


def test_a_change_to_the_cited_code_makes_maintenance_call_the_model_again(
    runner: ActionRunner,
) -> None:
    seed(runner, CLEAN)
    _, first = maintain(runner, "Nothing to change.")
    assert first.calls == 1
    _, unchanged = maintain(runner)
    assert unchanged.calls == 0
    repo = GitRepo(runner.workspace, {})
    repo.write("src/app.py", "def fetch(url):\n    return url\n")
    repo.commit("Rename fetch_retry")
    _, again = maintain(runner, "Dropped it.")
    assert again.calls == 1
    assert "`fetch_retry` is no longer in `src/app.py`" in task_of(again)


def test_without_a_checkout_citations_are_not_checked_and_the_model_is_called(
    tmp_path: Path,
) -> None:
    runner = ActionRunner(tmp_path, inputs={"mode": "maintenance"})
    maintain(runner, write(CLEAN), "Seeded.")
    outcome, model = maintain(runner, "Nothing to change.")
    assert model.calls == 1
    assert "citations not checked: the workspace is no git checkout" in outcome.stdout
    _, again = maintain(runner, "Still nothing.")
    assert again.calls == 1  # no digest without the code: never skipped


def test_figures_fifty_items_five_stale(runner: ActionRunner) -> None:
    """The issue's figures: model calls per maintenance run on 50 items with 5 stale, then when
    nothing changed (target 0)."""
    items = [
        f"- Helper `src/app.py:fetch_retry` rule {n}: keep it under {n} ms.\n" for n in range(45)
    ]
    stale = [f"- Module `src/gone_{n}.py` owns the cache.\n" for n in range(5)]
    seed(runner, "# Memory\n" + "".join(items + stale))
    outcome, model = maintain(runner, write("# Memory\n" + "".join(items)), "Removed 5 stale.")
    task = task_of(model)
    assert task.count("is not in the default branch") == 5
    assert "maintenance found stale" in outcome.summary
    _, quiet = maintain(runner)
    print(f"\nFIGURES model calls: 50 items/5 stale={model.calls}, unchanged={quiet.calls}")
    assert (model.calls, quiet.calls) == (2, 0)


def test_a_near_duplicate_search_that_hit_its_cap_says_so_in_the_summary(
    runner: ActionRunner,
) -> None:
    """Hundreds of look-alikes: each item is compared with only some of them, and the run's
    notes say how many items were capped."""
    items = [f"- Rule {n}: keep caches small.\n" for n in range(230)]  # within 7 KiB
    seed(runner, "# Memory\n" + "".join(items))
    outcome, model = maintain(runner, "Nothing to change.")
    assert model.calls == 1
    assert "maintenance capped the near-duplicate search: 230 item(s)" in outcome.summary
    assert "compared with at most 200 others" in outcome.summary


def test_a_pull_request_output_with_the_cache_store_says_it_needs_git(
    runner: ActionRunner,
) -> None:
    runner.inputs["maintenance_output"] = "pull_request"
    outcome, _ = maintain(runner, write(CLEAN), "Seeded.")
    assert "maintenance_output: pull_request needs memory_store: git" in outcome.stdout
    assert outcome.outputs["memory_changed"] == "true"  # written as with commit


class SteppingClock:
    """A clock that moves ``step`` seconds each time it is read: the run's phases meet the
    deadline at a point fixed by how often they look, never by how fast the machine is."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_checks_out_of_time_say_what_they_did_not_check_and_keep_no_digest(
    runner: ActionRunner,
) -> None:
    items = [
        f"- Helper `src/app.py:fetch_retry` rule {n}: keep it under {n} ms.\n" for n in range(40)
    ]
    seed(runner, "# Memory\n" + "".join(items))
    # timeout_minutes=10: the checks may use 300 s, 20 reads of the clock at 15 s each.
    runner.timer = SteppingClock(15.0)
    outcome, model = maintain(runner, "Nothing to change.")
    assert model.calls == 1  # the model keeps its share of the time
    assert "::warning::Maintenance did not check the citations of" in outcome.stdout
    assert "maintenance did not check the citations of" in outcome.summary
    assert "its share of timeout_minutes=10 ran out" in outcome.summary
    assert "maintenance did not check every pair of items for near-duplicates" in outcome.summary
    runner.timer = SteppingClock(0.0)  # time stands still: everything is checked
    _, again = maintain(runner, "Still nothing.")
    assert again.calls == 1  # no digest was kept of the run that did not check it all
    _, quiet = maintain(runner)
    assert quiet.calls == 0


def test_a_run_out_of_time_before_the_model_neither_calls_it_nor_saves(
    runner: ActionRunner,
) -> None:
    seed(runner, CLEAN)
    runner.timer = SteppingClock(200.0)  # 600 s gone after three reads
    outcome, model = maintain(runner)  # an empty script: any model call fails the run
    assert model.calls == 0
    assert (
        "The agent did not run: its time (timeout_minutes: 10) ran out before the model call."
        in (outcome.summary)
    )
    assert outcome.outputs["memory_changed"] == "false"
    assert "Memory not saved: the run did not finish" in outcome.stdout
