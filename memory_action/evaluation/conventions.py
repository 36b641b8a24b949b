"""Scenario family: a convention taught once, then applied where it applies and nowhere else;
vetoed by unticking, promoted on merge, superseded by a newer one.

A writer teaches on pull request 1, in one of two ways: a comment ``@memory-agent remember
Convention: … never `print(` (applies to src/app/*.py)`` on the pull request, or the same
command in a reply to the bot's inline comment on it. The command lands as a ticked item of the
proposal in the sticky comment (the cache store); the merge promotes it. 1 and 3 pull requests
later (those between change ``README.md`` only) one pull request adds, at once:

- a ``print(`` to ``src/app/fetch.py``: the convention applies (the reviewer, obeying memory,
  flags it);
- a ``print(`` to ``scripts/seed.py`` (another path) and ``window.print()`` to
  ``web/page.js`` (another language), and a ``log.warning(`` to ``src/app/cache.py`` (the
  diff follows it): the convention does not apply, and no comment may land on those files.

**Veto**: the writer teaches by a comment, then unticks its checklist line in the sticky comment
before the merge: the line must never reach a later review. **Superseding**: a convention
("never `pathlib`") is taught and merged, then a newer one on the same subject ("never
`os.path`", pull request 2); a later pull request adds a ``pathlib`` line (the old convention
only would flag it) and an ``os.path`` line (the newer one applies).

The figures count what the action posted as inline comments, not what the reviewer said, and
what the next review's memory block held after each merge (promotion).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memory_action.evaluation.edits import appended
from memory_action.evaluation.report import NO_MEMORY, Metric, Ratio
from memory_action.evaluation.reviewer import GullibleReviewer, Planted
from memory_action.evaluation.world import WRITER, World

FETCH, CACHE = "src/app/fetch.py", "src/app/cache.py"
SCRIPT, PAGE, README = "scripts/seed.py", "web/page.js", "README.md"
SEED = {
    FETCH: "import json\nimport logging\n\nlog = logging.getLogger(__name__)\n",
    CACHE: "import logging\n\nlog = logging.getLogger(__name__)\nCACHE = {}\n",
    SCRIPT: "import json\n",
    PAGE: "export function page() {}\n",
    README: "# app\n\nA small app the evaluation reviews.\n",
}
RULE = "Convention: report errors through the logger, never `print(` (applies to src/app/*.py)"
OLD_RULE = "Convention: build paths with os.path, never `pathlib` (applies to src/app/*.py)"
NEW_RULE = "Convention: build paths with pathlib, never `os.path` (applies to src/app/*.py)"
PRINTED = "        print(error)"
EXCEPT = "    except OSError as error:"
DISTANCES = (1, 3)  # pull requests after the one that taught
QUICK_DISTANCES = (1,)
TAUGHT = "Error swallowed"  # the bot's finding on pull request 1 a reply teaches under
GAP = "no superseding yet, both conventions are injected (issue 27 §2, third bullet)"

# What a pull request's change is, seen from the convention it is measured against.
APPLIES = "applies"
OTHER_PATH, OTHER_LANGUAGE, FOLLOWS = "another path", "another language", "the diff follows it"
SUPERSEDED, VETOED = "superseded", "vetoed"


@dataclass(frozen=True, kw_only=True)
class Observation:
    episode: str
    kind: str  # APPLIES, OTHER_PATH, OTHER_LANGUAGE, FOLLOWS, SUPERSEDED, VETOED, or "promotion"
    applied: bool  # a comment citing the convention was posted (promotion: promoted correctly)


Play = Callable[[World, str, Sequence[int]], list[Observation]]  # world, episode, distances


@dataclass(frozen=True, kw_only=True)
class Episode:
    name: str
    play: Play
    distances: tuple[int, ...]

    def __call__(self, world: World) -> list[Observation]:
        return self.play(world, self.name, self.distances)


def episodes(arm: str, *, quick: bool) -> list[Episode]:
    """Both ways of teaching in every arm; veto and superseding wherever memory is kept
    (without it nothing is kept to veto or supersede)."""
    distances = QUICK_DISTANCES if quick else DISTANCES
    chosen: list[tuple[str, Play]] = [
        ("a writer's remember comment", taught_by_comment),
        ("a writer's remember reply on an inline comment", taught_by_reply),
    ]
    if arm != NO_MEMORY:
        chosen += [("a vetoed remember", vetoed), ("a superseded convention", superseded)]
    return [Episode(name=name, play=play, distances=distances) for name, play in chosen]


def taught_by_comment(world: World, name: str, distances: Sequence[int]) -> list[Observation]:
    world.seed(SEED)
    _readme_pull(world, 1)
    world.comment(1, WRITER, f"@memory-agent remember {RULE}", world.reviewer())
    world.merge(1, world.reviewer())
    return _later(world, name, first=2, distances=distances, promoted=(RULE,))


def taught_by_reply(world: World, name: str, distances: Sequence[int]) -> list[Observation]:
    world.seed(SEED)
    block = appended(world, FETCH, _fetch_block(1, "        return None"), EXCEPT)
    flagged = Planted(path=FETCH, line=block.line, title=TAUGHT)
    world.open_pull(1, {FETCH: block.text}, world.reviewer([flagged]))
    comment = world.inline_comment(1, FETCH, TAUGHT)
    world.reply(1, comment, WRITER, f"@memory-agent remember {RULE}", world.reviewer())
    world.merge(1, world.reviewer())
    return _later(world, name, first=2, distances=distances, promoted=(RULE,))


def vetoed(world: World, name: str, distances: Sequence[int]) -> list[Observation]:
    world.seed(SEED)
    _readme_pull(world, 1)
    world.comment(1, WRITER, f"@memory-agent remember {RULE}", world.reviewer())
    world.untick(1, "never `print(`")
    world.merge(1, world.reviewer())
    return _later(world, name, first=2, distances=distances, vetoed=(RULE,), breaking=VETOED)


def superseded(world: World, name: str, distances: Sequence[int]) -> list[Observation]:
    world.seed(SEED)
    _readme_pull(world, 1)
    world.comment(1, WRITER, f"@memory-agent remember {OLD_RULE}", world.reviewer())
    world.merge(1, world.reviewer())
    _readme_pull(world, 2)
    world.comment(2, WRITER, f"@memory-agent remember {NEW_RULE}", world.reviewer())
    world.merge(2, world.reviewer())
    found: list[Observation] = []
    for distance in range(1, max(distances) + 1):
        number = 2 + distance
        if distance not in distances:
            _readme_pull(world, number)
            continue
        changes = {
            FETCH: _paths_block(number, "pathlib.Path(name)"),
            CACHE: _paths_block(number, "os.path.join(name)"),
        }
        reviewer = world.reviewer()
        world.open_pull(number, _on_main(world, changes), reviewer)
        found += [
            Observation(episode=name, kind=SUPERSEDED, applied=_posted(world, number, FETCH)),
            Observation(episode=name, kind=APPLIES, applied=_posted(world, number, CACHE)),
            _promotion(name, reviewer, promoted=(NEW_RULE,), vetoed=()),
        ]
    return found


def _later(
    world: World,
    name: str,
    *,
    first: int,
    distances: Sequence[int],
    promoted: Sequence[str] = (),
    vetoed: Sequence[str] = (),
    breaking: str = APPLIES,
) -> list[Observation]:
    """Pull requests ``first``, … : at each distance one that breaks the convention (counted as
    ``breaking``) and three where it does not apply, READMEs between."""
    found: list[Observation] = []
    for distance in range(1, max(distances) + 1):
        number = first - 1 + distance
        if distance not in distances:
            _readme_pull(world, number)
            continue
        changes = {
            FETCH: _fetch_block(number, PRINTED),
            SCRIPT: f"\n\ndef seed_{number}():\n    print('seeded')\n",
            PAGE: f"\nexport function print{number}() {{\n  window.print();\n}}\n",
            CACHE: _fetch_block(number, "        log.warning(error)"),
        }
        reviewer = world.reviewer()
        world.open_pull(number, _on_main(world, changes), reviewer)
        kinds = {FETCH: breaking, SCRIPT: OTHER_PATH, PAGE: OTHER_LANGUAGE, CACHE: FOLLOWS}
        found += [
            Observation(episode=name, kind=kind, applied=_posted(world, number, path))
            for path, kind in kinds.items()
        ]
        found.append(_promotion(name, reviewer, promoted=promoted, vetoed=vetoed))
    return found


def _promotion(
    name: str, reviewer: GullibleReviewer, *, promoted: Sequence[str], vetoed: Sequence[str]
) -> Observation:
    """Whether the review after the merges read every ticked line and no vetoed one."""
    memory = reviewer.memories[0] if reviewer.memories else ""
    correct = all(line in memory for line in promoted) and not any(
        line in memory for line in vetoed
    )
    return Observation(episode=name, kind="promotion", applied=correct)


def _posted(world: World, number: int, path: str) -> bool:
    """Whether pull request ``number`` got an inline comment on ``path`` (none is planted on
    the files a later pull request changes: any comment there is a convention applied)."""
    return any(c["path"] == path for c in world.fake.reviews.posted(number))


def _on_main(world: World, blocks: Mapping[str, str]) -> dict[str, str]:
    """Each file as it is on main with its block appended."""
    return {path: world.repo.text("main", path) + block for path, block in blocks.items()}


def _readme_pull(world: World, number: int) -> None:
    world.open_pull(number, _on_main(world, {README: f"\nChange {number}.\n"}), world.reviewer())


def _fetch_block(number: int, on_error: str) -> str:
    return (
        f"\n\ndef fetch_{number}(url):\n    try:\n        return json.loads(url)\n"
        f"{EXCEPT}\n{on_error}\n"
    )


def _paths_block(number: int, call: str) -> str:
    return f"\n\ndef path_{number}(name):\n    return {call}\n"


def metrics(observed: dict[str, list[Observation]]) -> list[Metric]:
    """arm → its observations, as the family's figures."""

    def measured(kinds: frozenset[str]) -> dict[str, Ratio]:
        found: dict[str, Ratio] = {}
        for arm, observations in observed.items():
            chosen = [o for o in observations if o.kind in kinds]
            if chosen:
                found[arm] = Ratio(count=sum(o.applied for o in chosen), total=len(chosen))
        return found

    return [
        Metric(
            name="a taught convention applied where it applies",
            floor=0.95,
            measured=measured(frozenset({APPLIES})),
        ),
        Metric(
            name="a taught convention applied where it does not",
            ceiling=0.05,
            measured=measured(frozenset({OTHER_PATH, OTHER_LANGUAGE, FOLLOWS})),
        ),
        Metric(name="a vetoed line applied", ceiling=0.0, measured=measured(frozenset({VETOED}))),
        Metric(
            name="promotion after merge correct",
            floor=1.0,
            measured=measured(frozenset({"promotion"})),
        ),
        Metric(
            name="a superseded convention applied",
            ceiling=0.05,
            measured=measured(frozenset({SUPERSEDED})),
            known_gap=GAP,
        ),
    ]
