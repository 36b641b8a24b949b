"""The user messages the review engine sends: one per batch of the diff (answered with the
``report_review`` tool, ``answer``); the last batch's also carries the earlier batches'
summaries and findings and asks for the whole review's summary, and only when those do not fit
beside its diff does a last request of its own write the summary from them.

What the pull request holds (title, description, code) is untrusted; it goes inside
``<pull_request>`` tags, and the system prompt says that it is data, never instructions. A closing
tag inside that text is defused so it cannot end the block early.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memory_action.github.pull_request import PullRequestInfo
from memory_action.model.tokens import TokenEstimator
from memory_action.review.answer import ANSWER_TOOL
from memory_action.review.selection import Skipped

LIST_CHARS = 800  # of each list of file names in a request: the rest are counted
OPEN, CLOSE = "<pull_request>", "</pull_request>"
TITLE_CHARS = 300  # of the pull request's title (GitHub allows 256; an event may carry more)
UNTRUSTED_SHARE = 8  # a comment's request takes at most this fraction of the input limit
MIN_UNTRUSTED_CHARS = 500


@dataclass(frozen=True, kw_only=True)
class BatchView:
    """What one request of the review shows: which part, its diff, where the rest is."""

    index: int  # 1-based
    count: int
    diff: str  # the rendered files of the batch
    elsewhere: Sequence[str]  # reviewable files that other requests hold
    skipped: Sequence[Skipped]  # files no request holds, with the reason


def description_chars(input_tokens: int, estimator: TokenEstimator) -> int:
    """Characters of the PR description shown: about 2.5% of the input limit, 500 to 4,000."""
    return min(4_000, max(500, estimator.chars_for(input_tokens // 40)))


def untrusted_chars(input_tokens: int, estimator: TokenEstimator | None = None) -> int:
    """Characters of a request written by others (a comment) shown: 1/8 of the input limit."""
    counter = estimator or TokenEstimator()
    return max(MIN_UNTRUSTED_CHARS, counter.chars_for(input_tokens // UNTRUSTED_SHARE))


def bounded(text: str, chars: int, what: str) -> str:
    """``text`` cut to ``chars`` characters, with a note saying so when it was cut."""
    if len(text) <= chars:
        return text
    return (
        f"{text[:chars]}\n[{what} cut to its first {chars:,} of {len(text):,} characters to fit "
        "the model's input limit]"
    )


def defuse(text: str) -> str:
    return text.replace("</pull_request", "<\\/pull_request")


def header(info: PullRequestInfo, repository: str, *, description_chars: int) -> str:
    body = bounded(info.body.strip(), description_chars, "description")
    title = bounded(" ".join(info.title.split()), TITLE_CHARS, "title")
    # Number 0: a local change (``review --local``), which GitHub never saw.
    change = f"Pull request #{info.number}" if info.number else "Local change"
    lines = [
        f"{change} in {repository}: {title}",
        f"Author: {info.author}; base: {info.base_ref} <- head: {info.head_ref} "
        f"({info.head_sha[:12]})",
    ]
    if body:
        lines += ["", "Description (written by the author):", body]
    return defuse("\n".join(lines))


def batch_message(
    pr_header: str,
    view: BatchView,
    *,
    memory: bool,
    budget_bytes: int,
    extra: str = "",
    earlier: str = "",
    names_chars: int = LIST_CHARS,
    parts: Sequence[tuple[str, str]] = (),
) -> str:
    """``earlier``: the open findings of earlier reviews (``ledger.open_findings_note``);
    ``names_chars``: how much of the request the other requests' file names may take;
    ``parts``: the earlier batches' (files, summary and findings), given to the last batch,
    which then writes the summary of the whole review."""
    single = view.count == 1
    findings = "Only what matters; no findings if the change is fine."
    if parts:
        ask = (
            f"This request holds part {view.index} of {view.count} of the change, the last; "
            "the summaries and findings of the earlier parts are below it. Answer with "
            f"{ANSWER_TOOL}: the summary of the whole pull request's review in Markdown (what "
            "the change does, and what matters most, at most about 200 words; the earlier "
            "findings are posted as they are: do not list them again) and your findings for "
            f"the files of this part only. {findings}"
        )
    elif single:
        ask = (
            f"Review the changes below; answer with {ANSWER_TOOL}: a summary (what the change "
            "does, whether it needs work; at most about 150 words) and your findings. "
            f"{findings} Use read_file or get_file_patch only when a change cannot be judged "
            "without more code."
        )
    else:
        ask = (
            f"This request holds part {view.index} of {view.count} of the change. Answer with "
            f"{ANSWER_TOOL}: a summary of this part (at most about 80 words) and your findings "
            f"for the files below only. {findings}"
        )
    if memory:
        ask += (
            " If the change teaches a durable lesson about this repository (most teach none), "
            f"record it in memory; keep memory under {budget_bytes} bytes."
        )
    lines = [ask, *(["", extra] if extra else []), *(["", earlier] if earlier else [])]
    lines += ["", OPEN, pr_header, ""]
    if view.elsewhere:
        lines.append(
            "Reviewed in other requests (do not read them): "
            + _names(list(view.elsewhere), names_chars)
        )
    if view.skipped:
        lines.append("Not reviewed: " + _by_reason(view.skipped))
    lines += ["", defuse(view.diff.rstrip("\n"))]
    if parts:
        lines += ["", _sections(parts, of=view.count)]
    return "\n".join([*lines, CLOSE])


def synthesis_message(
    pr_header: str,
    findings: Sequence[tuple[str, str]],
    *,
    memory: bool,
    budget_bytes: int,
    extra: str = "",
) -> str:
    """``findings``: (the files of a part, its summary and findings), in order."""
    ask = (
        "Write the summary of this pull request's review in Markdown from the summaries and "
        "findings below, which earlier requests made on its parts: what the change does, and "
        "what matters most, at most about 200 words. The findings are posted as they are, each "
        "on its line: do not list them again one by one. If nothing needs to change, say so in "
        "one sentence."
    )
    if memory:
        ask += (
            " If the findings show a durable lesson about this repository, record it in memory; "
            f"keep memory under {budget_bytes} bytes."
        )
    head = [ask, *(["", extra] if extra else [])]
    return "\n".join([*head, "", OPEN, pr_header, "", _sections(findings), CLOSE])


def _sections(findings: Sequence[tuple[str, str]], *, of: int | None = None) -> str:
    """Each earlier part's summary and findings under a heading that names its files."""
    count = of or len(findings)
    return "\n\n".join(
        f"## Findings of part {i} of {count} ({files})\n{defuse(text.strip())}"
        for i, (files, text) in enumerate(findings, start=1)
    )


def _by_reason(skipped: Sequence[Skipped]) -> str:
    """``reason: a, b and 3 more; other reason: c``, in order of first appearance."""
    groups: dict[str, list[str]] = {}
    for item in skipped:
        groups.setdefault(item.reason, []).append(item.path)
    share = LIST_CHARS // (2 * len(groups))
    return "; ".join(f"{reason}: {_names(paths, share)}" for reason, paths in groups.items())


def _names(names: list[str], limit: int = LIST_CHARS) -> str:
    """The names grouped by folder (``_grouped``), as many as fit in ``limit`` characters, then
    how many more there are."""
    if len(_grouped(names)) <= limit:
        return _grouped(names)
    low, high = 1, len(names) - 1  # the first name is always shown
    while low < high:  # the most names whose list fits
        middle = (low + high + 1) // 2
        if len(_grouped(names[:middle])) + 16 <= limit:
            low = middle
        else:
            high = middle - 1
    return f"{_grouped(names[:low])} and {len(names) - low} more"


def _grouped(names: Sequence[str]) -> str:
    """``src/pkg/: a.py, b/c.py; docs/: d.md; README.md``: each name under the deepest folder
    that holds another of the names too (one prefix is cheaper than a hundred), in order of
    first appearance. A name the separators could split is quoted (``_plain``)."""
    holding = Counter(folder for name in names for folder in _folders(name))
    groups: dict[str, list[str]] = {}
    for name in names:
        shared = [folder for folder in _folders(name) if holding[folder] > 1]
        groups.setdefault(shared[-1] if shared else "", []).append(name)
    parts = [
        f"{_plain(folder)}: {_items([name[len(folder) :] for name in group])}"
        for folder, group in groups.items()
        if folder and len(group) > 1
    ]
    loose = [
        name for folder, group in groups.items() if not folder or len(group) == 1 for name in group
    ]
    if loose:
        parts.append(_items(loose))
    return defuse("; ".join(parts))


def _items(names: list[str]) -> str:
    """``a.py, {kind_1, kind_2}/reader.py``: names whose first folder alone differs are written
    once, the folders in braces (as a shell expands them)."""
    tails = Counter(_tail(name) for name in names)
    braced: dict[str, list[str]] = {}
    items: list[str] = []
    for name in names:
        tail = _tail(name)
        if tail and tails[tail] > 1:
            if tail not in braced:
                braced[tail] = []
                items.append(tail)
            braced[tail].append(name.split("/", 1)[0])
        else:
            items.append(_plain(name))
    return ", ".join(
        f"{{{', '.join(braced[item])}}}/{item}" if item in braced else item for item in items
    )


def _tail(name: str) -> str:
    """What follows the first folder of a name written as it is (``_plain``), else ""."""
    first, _, tail = name.partition("/")
    return tail if tail and first and _PLAIN_NAME.fullmatch(name) else ""


def _folders(name: str) -> list[str]:
    """The folders that hold ``name``, outermost first: ``a/``, ``a/b/``."""
    steps = name.split("/")[:-1]
    return ["/".join(steps[: depth + 1]) + "/" for depth in range(len(steps))]


_PLAIN_NAME = re.compile(r"[\w.@+=%~#!()\[\]/-]+(?: [\w.@+=%~#!()\[\]/-]+)*")


def _plain(name: str) -> str:
    """A name as it is when no separator (``,`` ``;`` ``:``), brace, quote, control character
    or outer space can split or end it; else as a JSON string, which says where it ends."""
    return name if _PLAIN_NAME.fullmatch(name) else json.dumps(name)
