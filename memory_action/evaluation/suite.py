"""The fixture tier: every scenario family's episodes, each in a world of its own, with memory
on and in each baseline, turned into the family's figures.

A family is a module with ``episodes(arm, quick=...)`` (callables that play one episode in a
world and return what they observed) and ``metrics(arm → observations)``; add one to
``FAMILIES``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from memory_action.evaluation import conventions, dismissals
from memory_action.evaluation.github import contract
from memory_action.evaluation.report import MEMORY, NO_MEMORY, Metric
from memory_action.evaluation.world import World

FAMILIES: tuple[ModuleType, ...] = (dismissals, conventions)
ARMS: Mapping[str, Mapping[str, str]] = {MEMORY: {}, NO_MEMORY: {"enable_memory": "false"}}


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
            for arm, inputs in ARMS.items():
                for episode in family.episodes(arm, quick=quick):
                    episodes += 1
                    progress(f"{family.__name__.rsplit('.', 1)[-1]}: {episode.name} ({arm})")
                    root = Path(folder) / str(episodes)
                    with World(root, inputs=inputs) as world:
                        observed.setdefault(arm, []).extend(episode(world))
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
    return tuple(ARMS)
