"""The fixture tier: every scenario family's episodes, each in a world of its own, with memory
on and in each baseline, turned into the family's figures.

A family is a module with ``episodes(arm, quick=...)`` (callables that play one episode in a
world and return what they observed) and ``metrics(arm → observations)``; add one to
``FAMILIES``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from memory_action.evaluation import conventions, dismissals, poisoning, transient
from memory_action.evaluation.github import contract
from memory_action.evaluation.report import MEMORY, NO_MEMORY, NO_TRUST, WHOLE_FILE, Metric
from memory_action.evaluation.world import Arm, World

FAMILIES: tuple[ModuleType, ...] = (dismissals, conventions, poisoning, transient)
# The product, then each baseline, emulated from outside the action (docs/evaluation.md).
ARMS: tuple[Arm, ...] = (
    Arm(name=MEMORY),
    Arm(name=NO_MEMORY, inputs={"enable_memory": "false"}),
    # Every reply learned, as some competitors do: GitHub answers everyone as a writer (so no
    # trust rule refuses anyone) and a writer ticks every proposal before the merge (no veto).
    Arm(name=NO_TRUST, everyone_writes=True, tick_everything=True),
    # deepagents' way: the reviewer reads the whole stored AGENTS.md as plain text.
    Arm(name=WHOLE_FILE, whole_file=True),
)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    metrics: tuple[Metric, ...]
    episodes: int
    runs: int  # of the action
    contract_violations: tuple[str, ...]  # what GitHub's descriptions refused ("" unchecked)
    unvalidated: str | None  # why the GitHub fake was not checked (None: it was)

    @property
    def met(self) -> bool:
        return not any(m.fails for m in self.metrics) and not self.contract_violations


def run_fixture_tier(*, quick: bool, progress: Callable[[str], None] = lambda _: None) -> Outcome:
    contract.take()  # only this run's violations count
    found: list[Metric] = []
    episodes = runs = 0
    with tempfile.TemporaryDirectory(prefix="memory-agent-eval-") as folder:
        for family in FAMILIES:
            observed: dict[str, list[Any]] = {}
            for arm in ARMS:
                for episode in family.episodes(arm.name, quick=quick):
                    episodes += 1
                    progress(f"{family.__name__.rsplit('.', 1)[-1]}: {episode.name} ({arm.name})")
                    root = Path(folder) / str(episodes)
                    with World(root=root, arm=arm) as world:
                        observed.setdefault(arm.name, []).extend(episode(world))
                    runs += len(world.runs)
            found += family.metrics(observed)
    return Outcome(
        metrics=tuple(found),
        episodes=episodes,
        runs=runs,
        contract_violations=tuple(contract.take()),
        unvalidated=contract.missing_reason() if not contract.enforced() else None,
    )


def arms() -> Sequence[str]:
    return tuple(arm.name for arm in ARMS)
