"""Untrusted Markdown (what the model wrote) made harmless to post, and fences it cannot close.

``safe_markdown``:

- ``@user`` and ``@org/team`` outside code become inline code (or, where a backtick or a
  backslash next to them would spoil that, get a zero-width space after ``@``): GitHub notifies
  everyone mentioned in a comment, and a bot should not ping people (``@pytest.fixture`` would
  ping user "pytest"). Code spans and code blocks are left alone: GitHub does not notify from code.
- Raw HTML outside code is escaped (``&lt;``): an unclosed ``<details>``, ``<!--`` or ``<b>``
  would hide or restyle everything after it. A code fence left open is closed (in its list item
  or quote, if it opened there), so the text that follows the review is never code.
- Inside code, what would act if it were read as prose (``<details>``, ``<summary>``, HTML
  blocks at a line start) gets a zero-width space after ``<``.
- ``<!-- memory-agent:`` and the words ``memory-agent:proposal`` / ``memory-agent:item`` are
  broken everywhere (``break_markers``), so no text we post can carry our markers.

What is code and what is prose comes from a CommonMark parser (markdown-it-py; GitHub's cmark-gfm
is CommonMark too): indented code, fences in quotes and list items, HTML blocks are read as
GitHub reads them. Escaping prose can change how the rest parses (an HTML block escaped into a
paragraph swallows the indented "code" after it), so the text is parsed again after each pass
until nothing changes; then the result is checked token by token. Should any mention or raw HTML
still be prose, every mention is broken and every tag escaped regardless of code spans, and
failing that the whole text is shown as one code block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

ZWSP = "\u200b"
# A list item's marker, as CommonMark reads it: a bullet, or up to nine digits and "." or ")".
LIST_MARKER = re.compile(r"(?:[-+*]|[0-9]{1,9}[.)])")
# A fence line, also inside list items and block quotes (the prefix before the run).
_FENCE = re.compile(
    rf"((?:[ \t]*(?:>|{LIST_MARKER.pattern}(?=[ \t])))*[ \t]*)(`{{3,}}|~{{3,}})(.*)"
)
# An inline code span, ``code`` what it holds: not across a blank line (a span never crosses
# paragraphs).
CODE_SPAN = re.compile(
    r"(?<![`\\])(?P<ticks>`+)(?!`)(?P<code>(?:[^\n]|\n(?![ \t]*\n))*?)(?<!`)(?P=ticks)(?!`)"
)
# Prose: any raw HTML (a tag, comment, declaration, processing instruction); not an autolink.
_TAG_START = r"<(?=[A-Za-z/!?])(?![A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>)"
# Code: the HTML that would still act if GitHub read this "code" as prose.
_DETAILS_TAG = re.compile(r"<(?=/?(?:details|summary)\b)", re.I)
_HTML_BLOCK_START = re.compile(
    r"^([ \t>*+\-.)\d]*)<(?=[!?]|(?:pre|script|style|textarea)\b)", re.I | re.M
)
# A GitHub mention with its dotted tail (``@pytest.fixture``), its "@" maybe spelt as an entity;
# not an e-mail, not in a URL's path. GitHub's mention filter takes any character outside ASCII
# ``[A-Za-z0-9_]`` as the boundary before "@" (``é@org/team`` notifies), not Unicode's ``\w``.
_MENTION = re.compile(
    r"(?<![A-Za-z0-9_/])(?:@|&(?:#0*64|#x0*40|commat);)[A-Za-z0-9][A-Za-z0-9-]*"
    r"(?:[./][A-Za-z0-9_][\w-]*)*",
    re.I,
)
_AT_ENTITY = re.compile(r"^&[^;]*;")
# What prose escapes, left to right: code spans are kept (their HTML broken), tags and mentions
# are not. ``hard``: no code spans, every "<" that could start a tag.
_PROSE = re.compile(
    rf"(?P<span>{CODE_SPAN.pattern})|(?P<tag>{_TAG_START})|(?P<mention>{_MENTION.pattern})", re.I
)
_PROSE_HARD = re.compile(rf"(?P<tag><(?=[A-Za-z/!?]))|(?P<mention>{_MENTION.pattern})", re.I)
_SPAN_OR_TICKS = re.compile(rf"(?P<span>{CODE_SPAN.pattern})|`+")
_MARKER_START = re.compile(r"<!--(?=\s*memory-agent:)", re.I)
# The words of the proposal block and its checkboxes (memory.proposals), even without "<!--".
_PROPOSAL_WORD = re.compile(r"memory-agent(?=\s*:\s*(?:proposal|item))", re.I)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
# Our own HTML is held out of ``safe_document``'s escaping as private-use placeholders.
_HOLD_OPEN, _HOLD_CLOSE = "\ue000", "\ue001"
_HELD = re.compile(f"[{_HOLD_OPEN}{_HOLD_CLOSE}]")
_HELD_SNIPPET = re.compile(f"{_HOLD_OPEN}(\\d+){_HOLD_CLOSE}")
MAX_PASSES = 8  # each pass escapes at least one more thing; real text settles in one or two
_PROBE = "memory-agent-probe"  # a paragraph that must stay one after the review


def fence(text: str, info: str = "", char: str = "`") -> str:
    """``text`` as a fenced code block no line of it can close: the fence (of ``char``, backtick
    or tilde) is longer than every run of that character inside."""
    marks = char * max(3, _longest_run(text, char) + 1)
    return f"{marks}{info}\n{text}\n{marks}"


def code_span(text: str) -> str:
    """Inline code that holds any text (backticks included) on one line: a line end inside
    (a path can hold one) would let what follows it out of the span."""
    text = " ".join(normalise_line_ends(text).split("\n"))
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _longest_run(text: str, char: str) -> int:
    """The longest run of ``char`` in ``text``: a fence or a span's ticks must be longer."""
    return max((len(run) for run in re.findall(re.escape(char) + "+", text)), default=0)


def safe_markdown(text: str) -> str:
    """Model-written Markdown made safe to post (see the module docstring)."""
    # Blank lines go, but not the first line's indent: four spaces make it a code block.
    text = _LEADING_BLANK_LINES.sub("", _normalise(text)).rstrip()
    for hard in (False, True):
        safe = _close_open_fence(_settle(text, hard=hard))
        if _is_safe(safe):
            return break_markers(safe)
    return break_markers(fence(_escape_code(text), char="~"))


def safe_document(text: str, ours: Iterable[str] = ()) -> str:
    """A whole document we assembled (a comment, a summary, a reply) made safe as
    ``safe_markdown`` makes the model's text, keeping exactly the snippets of raw HTML in
    ``ours`` (our markers, our ``<details>``) as they are: anything else that would act is
    escaped, wherever it came from."""
    text = _HELD.sub("", normalise_line_ends(text))
    kept = sorted({normalise_line_ends(snippet) for snippet in ours} - {""}, key=len, reverse=True)
    if kept:
        ours_pattern = re.compile("|".join(re.escape(snippet) for snippet in kept))
        text = ours_pattern.sub(
            lambda m: f"{_HOLD_OPEN}{kept.index(m.group(0))}{_HOLD_CLOSE}", text
        )
    safe = safe_markdown(text)
    return _HELD_SNIPPET.sub(lambda m: kept[int(m.group(1))], safe)


def raw_html(markdown: str) -> tuple[str, ...]:
    """The raw HTML of Markdown we wrote ourselves (our markers, ``<details>``, ``<sub>``), as
    ``safe_document`` keeps it: each HTML block and inline tag as written."""
    return tuple(
        token.content.rstrip("\n")
        for token in _tokens(normalise_line_ends(markdown))
        if token.type in ("html_block", "html_inline")
    )


def safe_prose(text: str) -> str:
    """One piece of prose (a note, a table cell) made safe: mentions and raw HTML."""
    return break_markers(_safe_prose(text, hard=False))


def break_markers(text: str) -> str:
    """Break every ``<!-- memory-agent:`` with a zero-width space, so it is no marker any more.

    ``memory-agent:proposal`` and ``memory-agent:item`` get one too, wherever they are.
    """
    text = _MARKER_START.sub(f"<!-{ZWSP}-", text)
    return _PROPOSAL_WORD.sub(lambda m: m.group(0) + ZWSP, text)


# --- reading the text as GitHub does ------------------------------------------------------------


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


@lru_cache(maxsize=2)  # the last text parsed: settling, closing fences and checking read it
def _parse(text: str) -> tuple[Token, ...]:
    """The block tokens of ``text`` (read only: they are shared by the passes over one text)."""
    return tuple(_parser().parse(text))


def _normalise(text: str) -> str:
    """Line ends as the parser counts them (it reads CR and CRLF as LF)."""
    return normalise_line_ends(text)


# CommonMark ends lines at CR and CRLF too; Python's ``splitlines`` also at these.
_LINE_ENDS = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def normalise_line_ends(text: str) -> str:
    """Every line end as LF: a lone CR (or a Unicode line separator) left in text we indent or
    quote line by line would end a list item or a quote where GitHub reads a new line."""
    return _LINE_ENDS.sub("\n", text)


def _tokens(text: str) -> Iterator[Token]:
    """Every token, inline ones (code spans, text, HTML) included."""
    for token in _parse(text):
        yield token
        yield from token.children or ()


def _code_lines(text: str) -> set[int]:
    """The lines (from 0) that are in a fenced or indented code block, wherever it is nested."""
    lines: set[int] = set()
    for token in _parse(text):
        if token.type in ("fence", "code_block") and token.map:
            lines.update(range(*token.map))
    return lines


def _is_safe(text: str) -> bool:
    """No raw HTML, and no mention outside code."""
    for token in _tokens(text):
        if token.type in ("html_block", "html_inline"):
            return False
        if token.type == "text" and _MENTION.search(token.content):
            return False
    return True


def _followed_by_prose(text: str) -> bool:
    """Whether what is posted after ``text`` (a blank line between) starts a paragraph: no fence
    is left open to swallow it."""
    last = [t for t in _tokens(f"{text}\n\n{_PROBE}") if t.type == "inline"][-1:]
    return bool(last) and last[0].content == _PROBE and last[0].level == 1


# --- escaping -----------------------------------------------------------------------------------


def _settle(text: str, *, hard: bool) -> str:
    """Escape the prose until parsing the result finds no new prose to escape."""
    for _ in range(MAX_PASSES):
        again = _escape_once(text, hard=hard)
        if again == text:
            break
        text = again
    return text


def _escape_once(text: str, *, hard: bool) -> str:
    code = _code_lines(text)
    chunks: list[tuple[bool, list[str]]] = []
    for number, line in enumerate(text.split("\n")):
        is_code = number in code
        if chunks and chunks[-1][0] == is_code:
            chunks[-1][1].append(line)
        else:
            chunks.append((is_code, [line]))
    return "\n".join(
        _escape_code("\n".join(lines)) if is_code else _safe_prose("\n".join(lines), hard=hard)
        for is_code, lines in chunks
    )


def _safe_prose(text: str, *, hard: bool) -> str:
    """Prose with its code spans kept; ``hard``: every mention and tag, in spans or not."""
    # A backtick no span took could pair with the ones we would add: break mentions instead.
    stray = any(m.group("span") is None for m in _SPAN_OR_TICKS.finditer(text))
    wrap = not (hard or stray)

    def escape(match: re.Match[str]) -> str:
        if match.group("tag") is not None:
            return "&lt;"
        if match.group("mention") is None:
            return _escape_code(match.group(0))  # a code span
        name = _AT_ENTITY.sub("@", match.group(0))
        before = text[match.start() - 1 : match.start()]
        if wrap and before not in ("\\", "`") and not text.startswith("`", match.end()):
            return f"`{name}`"
        return f"@{ZWSP}{name[1:]}"

    return (_PROSE_HARD if hard else _PROSE).sub(escape, text)


def _escape_code(text: str) -> str:
    """Code as written, but with what could act as HTML if GitHub parsed it as prose broken.

    A zero-width space after ``<`` is invisible in code, and makes it no tag.
    """
    text = _DETAILS_TAG.sub(f"<{ZWSP}", text)
    return _HTML_BLOCK_START.sub(rf"\1<{ZWSP}", text)


# --- a fence left open --------------------------------------------------------------------------


def _close_open_fence(text: str) -> str:
    """Close a fence that runs to the end of ``text``, in its list item or quote."""
    lines = text.split("\n")
    fences = [t for t in _parse(text) if t.type == "fence" and t.map]
    if not fences or fences[-1].map is None or fences[-1].map[1] < len(lines):
        return text
    start, end = fences[-1].map
    opener = _FENCE.fullmatch(lines[start])
    closer = _closer_for(opener) if opener is not None else fences[-1].markup
    last = _FENCE.fullmatch(lines[end - 1]) if end - 1 > start else None
    # The pattern reads a line indented by four spaces as a closer, CommonMark does not.
    if last is not None and _closes(last, closer) and _followed_by_prose(text):
        return text
    return f"{text}\n{closer}"


def _closes(match: re.Match[str], closer: str) -> bool:
    _, run, info = match.groups()
    marks = closer.lstrip(" \t>")
    return run[0] == marks[0] and len(run) >= len(marks) and not info.strip()


def _closer_for(match: re.Match[str]) -> str:
    """The opener's container prefix (list markers as spaces) and fence: closes it in place."""
    prefix, run, _ = match.groups()
    return LIST_MARKER.sub(lambda m: " " * len(m.group(0)), prefix) + run
