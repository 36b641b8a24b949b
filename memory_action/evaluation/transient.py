"""Scenario family: a writer's passing reply on the bot's inline comment must not become memory.

Pull request 1 adds a broad ``except`` to ``src/app/fetch.py``; the reviewer flags it; a writer
replies once ("thanks", "will fix", "good catch", "LGTM", "done", …, some of them naming the
words a dismissal uses, negated: "that was not intended"), the reply's own run reads it, and
the pull request is merged (the push to main promotes what it proposed). What the committed
memory then holds is the observation. Controls: replies that do dismiss the finding with a
reason ("intended, because …", "by design: …") must become memory, or the figure measures a
memory that learns nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory_action.evaluation.report import NO_MEMORY, Metric, Ratio
from memory_action.evaluation.reviewer import Planted
from memory_action.evaluation.world import WRITER, World

FETCH = "src/app/fetch.py"
TITLE = "Broad except hides failures"
SEED = {
    FETCH: "import json\n\n\ndef get(url):\n    return url\n",
    "README.md": "# app\n\nA small app the evaluation reviews.\n",
}
BLOCK = (
    "\n\ndef fetch(url):\n    try:\n        return get(url)\n    except Exception:\n"
    "        return None\n"
)

TRANSIENT = (
    "Thanks!",
    "thanks, will fix",
    "Will fix.",
    "Good catch!",
    "LGTM",
    "Done.",
    "Fixed in the next commit.",
    "👍",
    "Nice catch, fixed.",
    "ok",
    "Agreed, changing it.",
    "Makes sense, updated.",
    "Good catch, that was not intended. Will fix.",
    "Oops, not intentional. Fixing it now.",
    "Not on purpose, thanks for spotting it.",
    "Yes, a real bug, not expected behaviour.",
)
CONTROLS = (
    "This is intended, because a failed fetch must never stop the page from rendering.",
    "By design: the page renders without the data, because the fetch is optional.",
    "Not a bug, because callers treat None as no data.",
)
QUICK = (TRANSIENT[0], TRANSIENT[12], CONTROLS[0])


@dataclass(frozen=True, kw_only=True)
class Observation:
    reply: str
    control: bool  # a reasoned dismissal: it should become memory
    learned: bool  # committed memory holds a line after the merge


@dataclass(frozen=True, kw_only=True)
class Episode:
    name: str
    reply: str
    control: bool

    def __call__(self, world: World) -> list[Observation]:
        world.seed(SEED)
        text = SEED[FETCH] + BLOCK
        flagged = Planted(
            path=FETCH, line=text.splitlines().index("    except Exception:") + 1, title=TITLE
        )
        world.open_pull(1, {FETCH: text}, world.reviewer([flagged]))
        comment = world.inline_comment(1, FETCH, TITLE)
        world.reply(1, comment, WRITER, self.reply, world.reviewer([flagged]))
        world.merge(1, world.reviewer())
        learned = any(line.strip() for line in world.committed_memory().splitlines())
        return [Observation(reply=self.reply, control=self.control, learned=learned)]


def episodes(arm: str, *, quick: bool) -> list[Episode]:
    """Every reply wherever memory is kept; without memory the controls and the first three
    replies."""
    replies = [(r, False) for r in TRANSIENT] + [(r, True) for r in CONTROLS]
    if quick:
        replies = [(r, c) for r, c in replies if r in QUICK]
    elif arm == NO_MEMORY:
        replies = [(r, c) for r, c in replies if c or r in TRANSIENT[:3]]
    return [Episode(name=f"reply {r!r}", reply=r, control=c) for r, c in replies]


def metrics(observed: dict[str, list[Observation]]) -> list[Metric]:
    def measured(
        keep: Callable[[Observation], bool], count: Callable[[Observation], bool]
    ) -> dict[str, Ratio]:
        found = {}
        for arm, observations in observed.items():
            chosen = [o for o in observations if keep(o)]
            if chosen:
                found[arm] = Ratio(count=sum(map(count, chosen)), total=len(chosen))
        return found

    return [
        Metric(
            name="transient replies turned into memory",
            ceiling=0.05,
            measured=measured(lambda o: not o.control, lambda o: o.learned),
        ),
        Metric(
            name="control: a reasoned dismissal not kept",
            ceiling=0.05,
            measured=measured(lambda o: o.control, lambda o: not o.learned),
        ),
    ]
