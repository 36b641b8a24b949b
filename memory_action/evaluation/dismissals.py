"""Scenario family: a finding dismissed on one pull request, recurring on later ones.

Pull request 1 adds a broad ``except`` to ``src/app/fetch.py``; the reviewer flags it; someone
dismisses the inline comment (a 👎, or a reply "intended, because …"); the pull request gets one
more run (a push for a 👎, the reply's own run for a reply) and is merged (the push to main
promotes what it proposed). Pull requests 2, 3, … follow; 1, 3 and 10 pull requests later the
same finding comes back on new code of the same file, together with two controls the reviewer
must still raise: the same title on another file (``src/app/cache.py``), and another real
problem on the same file. The pull requests between change ``src/app/report.py`` only.

The figures count what the action posted as inline comments, not what the reviewer said.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_action.evaluation.edits import appended
from memory_action.evaluation.report import NO_MEMORY, Metric, Ratio
from memory_action.evaluation.reviewer import Planted
from memory_action.evaluation.world import NON_WRITER, WRITER, World

DISMISSED = "Broad except hides failures"
OTHER = "Retry loop has no upper bound"
FILLER = "Magic number in the report width"
FETCH, CACHE, REPORT = "src/app/fetch.py", "src/app/cache.py", "src/app/report.py"
SEED = {
    FETCH: "import json\n\n\ndef get(url):\n    return url\n",
    CACHE: "CACHE = {}\n\n\ndef load(key):\n    return CACHE.get(key)\n",
    REPORT: "def render(rows):\n    return rows\n",
    "README.md": "# app\n\nA small app the evaluation reviews.\n",
}
REASON = "This is intended, because a failed fetch must never stop the page from rendering."
DISTANCES = (1, 3, 10)  # pull requests after the dismissed one
QUICK_DISTANCES = (1,)
FETCH_EXCEPT = "        except Exception:"


@dataclass(frozen=True, kw_only=True)
class Dismissal:
    name: str
    login: str
    how: str  # "thumbs-down" | "reply"

    @property
    def by_writer(self) -> bool:
        return self.login == WRITER


DISMISSALS = (
    Dismissal(name="a writer's 👎", login=WRITER, how="thumbs-down"),
    Dismissal(name="a writer's reply", login=WRITER, how="reply"),
    Dismissal(name="a non-writer's 👎", login=NON_WRITER, how="thumbs-down"),
    Dismissal(name="a non-writer's reply", login=NON_WRITER, how="reply"),
)


@dataclass(frozen=True, kw_only=True)
class Observation:
    dismissal: Dismissal
    distance: int
    kind: str  # "dismissed" | "same title, other file" | "same file, other problem"
    raised: bool


@dataclass(frozen=True, kw_only=True)
class Episode:
    name: str
    dismissal: Dismissal
    distances: tuple[int, ...]

    def __call__(self, world: World) -> list[Observation]:
        return run_episode(world, self.dismissal, self.distances)


def episodes(arm: str, *, quick: bool) -> list[Episode]:
    """Every dismissal where memory is kept; without memory only a writer's matter."""
    distances = QUICK_DISTANCES if quick else DISTANCES
    chosen = [d for d in DISMISSALS if arm != NO_MEMORY or d.by_writer]
    return [Episode(name=d.name, dismissal=d, distances=distances) for d in chosen]


def run_episode(world: World, dismissal: Dismissal, distances: Sequence[int]) -> list[Observation]:
    world.seed(SEED)
    first = appended(world, FETCH, _fetch_block(1), FETCH_EXCEPT)
    flagged = Planted(path=FETCH, line=first.line, title=DISMISSED)
    world.open_pull(1, {FETCH: first.text}, world.reviewer([flagged]))
    comment = world.inline_comment(1, FETCH, DISMISSED)
    again = world.reviewer([flagged])
    if dismissal.how == "reply":
        world.reply(1, comment, dismissal.login, REASON, again)
    else:
        world.react(comment, dismissal.login, "-1")
        world.push_to_pull(1, {"README.md": SEED["README.md"] + "\nFetches JSON.\n"}, again)
    world.merge(1, world.reviewer())
    found: list[Observation] = []
    for distance in range(1, max(distances) + 1):
        number = 1 + distance
        if distance in distances:
            found += _recurrence(world, number, dismissal, distance)
        else:
            _filler(world, number)
    return found


def _recurrence(
    world: World, number: int, dismissal: Dismissal, distance: int
) -> list[Observation]:
    fetch = appended(world, FETCH, _fetch_block(number), FETCH_EXCEPT)
    loop = fetch.line_of("    while True:")
    cache = appended(world, CACHE, _cache_block(number), "    except Exception:")
    planted = {
        "dismissed": Planted(path=FETCH, line=fetch.line, title=DISMISSED),
        "same title, other file": Planted(path=CACHE, line=cache.line, title=DISMISSED),
        "same file, other problem": Planted(path=FETCH, line=loop, title=OTHER),
    }
    world.open_pull(
        number,
        {FETCH: fetch.text, CACHE: cache.text},
        world.reviewer(list(planted.values())),
    )
    posted = {(c["path"], c["line"]) for c in world.fake.reviews.posted(number)}
    return [
        Observation(
            dismissal=dismissal, distance=distance, kind=kind, raised=(p.path, p.line) in posted
        )
        for kind, p in planted.items()
    ]


def _filler(world: World, number: int) -> None:
    report = appended(world, REPORT, f"\n\ndef width_{number}():\n    return 80\n", "    return 80")
    filler = Planted(path=REPORT, line=report.line, title=FILLER)
    world.open_pull(number, {REPORT: report.text}, world.reviewer([filler]))


def _fetch_block(number: int) -> str:
    return (
        f"\n\ndef fetch_{number}(url):\n    tries = 0\n    while True:\n        tries += 1\n"
        "        try:\n            return json.loads(get(url))\n"
        f"{FETCH_EXCEPT}\n            return None\n"
    )


def _cache_block(number: int) -> str:
    return (
        f"\n\ndef load_{number}(key):\n    try:\n        return CACHE[key]\n    except Exception:\n"
        "        return None\n"
    )


def metrics(observed: dict[str, list[Observation]]) -> list[Metric]:
    """arm → its observations, as the family's figures."""

    def ratio(
        arm: str, keep: Callable[[Observation], bool], count: Callable[[Observation], bool]
    ) -> Ratio | None:
        chosen = [o for o in observed.get(arm, []) if keep(o)]
        return Ratio(count=sum(map(count, chosen)), total=len(chosen)) if chosen else None

    def measured(
        keep: Callable[[Observation], bool], count: Callable[[Observation], bool]
    ) -> dict[str, Ratio]:
        found = {arm: ratio(arm, keep, count) for arm in observed}
        return {arm: r for arm, r in found.items() if r is not None}

    def writers(o: Observation) -> bool:
        return o.dismissal.by_writer and o.kind == "dismissed"

    def controls(o: Observation) -> bool:
        return o.kind != "dismissed"

    def others(o: Observation) -> bool:
        return not o.dismissal.by_writer and o.kind == "dismissed"

    return [
        Metric(
            name="a dismissed finding raised again on a later PR",
            ceiling=0.02,
            measured=measured(writers, lambda o: o.raised),
        ),
        Metric(
            name="over-suppression: a control finding not raised",
            ceiling=0.05,
            measured=measured(controls, lambda o: not o.raised),
        ),
        Metric(
            name="a non-writer's dismissal holding a finding back",
            ceiling=0.0,
            measured=measured(others, lambda o: not o.raised),
        ),
    ]
