"""One sticky comment per agent and pull request, even after two runs each created one.

Two runs of a pull request at once can both find no comment and both create one (list, then
create: GitHub has no "create unless it exists"). The next write converges: the oldest comment is
kept (promotion reads it), the newer ones are deleted, and what people did in them is folded in.
The review text is the newest (the body being written); the ticks people set are not lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_action.memory.markers import marker_agent
from memory_action.memory.proposals import decode_block, task_states, with_task_states


def fold_duplicates(body: str, duplicates: Sequence[str], marker: str) -> str:
    """``body`` with the ticks people set in ``duplicates`` (other comments of the same agent).

    A box that differs from its item's default (ticked when the item is trusted) was set by a
    person. Such a choice in a duplicate is carried over, unless ``body`` carries a different
    choice of a person too: then the item stays unticked, because a veto must never be lost
    (a lost tick only waits for a maintainer to tick it again).
    """
    agent = marker_agent(marker)
    ours = decode_block(body, agent) if agent is not None else None
    if agent is None or ours is None:
        return body
    defaults = {item.id: item.trusted for item in ours.items}
    current = task_states(body)
    states = dict(current)
    for other in duplicates:
        theirs = decode_block(other, agent)
        if theirs is None:
            continue
        chosen_there = task_states(other)
        for item in theirs.items:
            chosen = chosen_there.get(item.id)
            if item.id not in defaults or chosen is None or chosen == item.trusted:
                continue  # not an item of ours, or nobody chose: the duplicate's default
            mine = states.get(item.id, defaults[item.id])
            states[item.id] = chosen if mine == defaults[item.id] else mine and chosen
    return with_task_states(body, {k: v for k, v in states.items() if current.get(k) != v})
