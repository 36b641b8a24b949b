"""A text as a reader sees it on GitHub, each character mapped back to where it came from.

``reader_view`` renders the text as CommonMark (markdown-it-py, with GitHub's tables and
strikethrough): backslash escapes are undone, character references (``&#95;``, ``&#x5f;``,
``&lowbar;``) decoded, emphasis, links and inline HTML taken out so that the text around them
joins (``ghp_**abc**def`` reads ``ghp_abcdef``), code shown as written. Then the
default-ignorable code points (Unicode's Default_Ignorable_Code_Point: zero-width characters,
bidi controls, variation selectors, the combining grapheme joiner, tag characters) are removed
and every character is NFKC-folded (full-width letters read as the ASCII ones). Last, an escape
or a character reference the reader still sees as written (in code, after a doubled backslash,
in raw HTML, which a browser decodes) is undone as well: a person reads ``ghp\\_abc`` in code
as ``ghp_abc``. Emphasis in code stays what it is there, literal asterisks.

Each run of the rendered text knows the span of the source it came from, so a secret found in
what the reader sees is redacted in the source, with the escapes, references and markup inside
it. Positions come from the parser itself: every inline rule is wrapped to note where the tokens
it makes start and end, and literal text is checked against the source before it is mapped
character by character (anything that fails the check maps to its whole line). The work is
linear in the text: one parse, one pass over the tokens, one pass over the characters.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it import rules_inline as inline_rules
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

__all__ = ["ReaderView", "reader_view"]

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn as nothing.
IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
# A character reference as HTML reads it (the ";" may be left out of some named ones).
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};?)")
# An escape or a reference a reader sees as written (in code, after a doubled backslash, in raw
# HTML): a person reads through it to the character it spells, so the view undoes it too.
_SPELLED = re.compile(r"\\[!-/:-@\[-`{-~]|" + _REFERENCE.pattern)
_SPAN = "reader_view_span"  # the key under which a token's source span (in its block) is kept
_InlineRule = Callable[[StateInline, bool], bool]
# The inline rules of CommonMark and the extensions enabled, by their names in markdown-it-py.
_INLINE_RULES: dict[str, _InlineRule] = {
    "text": inline_rules.text,
    "newline": inline_rules.newline,
    "escape": inline_rules.escape,
    "backticks": inline_rules.backtick,
    "strikethrough": inline_rules.strikethrough.tokenize,
    "emphasis": inline_rules.emphasis.tokenize,
    "link": inline_rules.link,
    "image": inline_rules.image,
    "autolink": inline_rules.autolink,
    "html_inline": inline_rules.html_inline,
    "entity": inline_rules.entity,
}
# Tokens a reader sees nothing of: markup, raw HTML (a tag shows nothing; GitHub drops what it
# does not allow), images (a picture, not its alt text).
_SHOWN = frozenset({"text", "text_special", "code_inline", "softbreak", "hardbreak"})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Run:
    """``length`` characters of the rendered text from ``at``; from the source's
    ``[start, end)``: character by character when ``literal``, else each from all of it."""

    at: int
    length: int
    start: int
    end: int
    literal: bool


@dataclass(frozen=True, slots=True)
class ReaderView:
    """``text``: what a reader sees; ``source_span`` places a part of it in the source."""

    text: str
    runs: tuple[_Run, ...]
    ats: tuple[int, ...]  # where each run starts in ``text``

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source span that renders to ``text[start:end]`` (``end > start``)."""
        return self._source(start)[0], self._source(end - 1)[1]

    def _source(self, index: int) -> tuple[int, int]:
        run = self.runs[bisect.bisect_right(self.ats, index) - 1]
        if run.literal:
            return run.start + index - run.at, run.start + index - run.at + 1
        return run.start, run.end


def reader_view(text: str) -> ReaderView:
    """``text`` as GitHub shows it (module docstring), mapped back to ``text``."""
    builder = _Builder()
    # Line ends as markdown-it reads them, without changing any offset.
    source = text.replace("\r\n", " \n").replace("\r", "\n").replace("\0", "\ufffd")
    lines = _LineStarts(source)
    env: dict[str, object] = {}
    in_table = False  # an inline block is a table's cell: several of them on one line
    for block in _parser().parse(source, env):
        if block.type == "inline" and block.map:
            builder.inline(block, source, lines, env, in_table=in_table)
        elif block.type in ("fence", "code_block", "html_block") and block.map:
            first = block.map[0] + (1 if block.type == "fence" else 0)
            places = _content_places(block.content, first, source, lines, in_table=False)
            builder.literal(block.content, places)
        if block.type.endswith("_close") or block.type in ("fence", "code_block", "html_block"):
            builder.separator(lines.start_of(block.map[1]) if block.map else len(source))
        in_table = block.type in ("th_open", "td_open")
    return _read_through(builder.view())


def _read_through(view: ReaderView) -> ReaderView:
    """``view`` with every escape and character reference still shown undone as well, each
    mapped to the source span of what it was rendered from."""
    if not _SPELLED.search(view.text):
        return view
    builder = _Builder()
    position = 0
    for match in _SPELLED.finditer(view.text):
        builder.mapped(view, position, match.start())
        start, end = view.source_span(match.start(), match.end())
        builder.add(_undone(match.group(0)), start, end)
        position = match.end()
    builder.mapped(view, position, len(view.text))
    return builder.view()


class _LineStarts:
    def __init__(self, source: str) -> None:
        self.source = source
        self.starts = [0, *(match.end() for match in re.finditer("\n", source))]

    def start_of(self, line: int) -> int:
        return self.starts[line] if line < len(self.starts) else len(self.source)

    def line(self, line: int) -> str:
        end = self.start_of(line + 1)
        return self.source[self.start_of(line) : end].rstrip("\n")


def _content_places(
    content: str, first: int, source: str, lines: _LineStarts, *, in_table: bool
) -> list[tuple[int, int, bool]]:
    """For each line of a block's ``content``: where it starts in the source, where its source
    line ends, and whether it is the source verbatim there."""
    places: list[tuple[int, int, bool]] = []
    cursors: dict[int, int] = {}
    for offset, part in enumerate(content.split("\n")):
        number = first + offset
        line, base = lines.line(number), lines.start_of(number)
        column = _column(part, line, cursors.get(number, 0), in_table=in_table)
        if column is None:
            places.append((base, base + len(line), False))
            continue
        cursors[number] = column + len(part)
        places.append((base + column, base + len(line), True))
    return places


def _column(part: str, line: str, cursor: int, *, in_table: bool) -> int | None:
    """Where ``part`` (a line of a block's content, its prefix and trailing blanks taken off)
    stands in its source ``line``."""
    candidates = []
    if not in_table:  # what a block prefix leaves: the line's end
        candidates = [len(line) - len(part), len(line.rstrip(" \t")) - len(part)]
    candidates.append(line.find(part, cursor))
    for column in candidates:
        if column >= cursor and line[column : column + len(part)] == part:
            return column
    return None


class _Builder:
    """The rendered text, run by run."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.runs: list[_Run] = []
        self.length = 0

    def view(self) -> ReaderView:
        runs = tuple(self.runs)
        return ReaderView("".join(self.parts), runs, tuple(run.at for run in runs))

    def separator(self, at: int) -> None:
        if self.parts and self.parts[-1] != "\n":
            self._add("\n", at, at, literal=False)

    def inline(
        self,
        block: Token,
        source: str,
        lines: _LineStarts,
        env: dict[str, object],
        *,
        in_table: bool,
    ) -> None:
        first = block.map[0] if block.map else 0
        places = _content_places(block.content, first, source, lines, in_table=in_table)
        to_source = _ContentMap(block.content, places)
        children = _Recorded()
        _parser().inline.parse(block.content, _parser(), env, children)
        for token in _shown(children):
            span = token.meta.get(_SPAN)
            if not isinstance(span, tuple):
                start, end = to_source.whole()
                self._add(_visible(token), start, end, literal=False)
                continue
            start, end = to_source.span(span[0], span[1])
            shown = _visible(token)
            if token.type == "text" and source[start:end] == shown:
                self.text(shown, start)
            else:
                self._add(shown, start, end, literal=False)

    def literal(self, content: str, places: list[tuple[int, int, bool]]) -> None:
        for part, (start, line_end, verbatim) in zip(content.split("\n"), places, strict=False):
            if not verbatim:
                self._add(part, start, line_end, literal=False)
            else:
                self.text(part, start)
            self._add("\n", line_end, line_end, literal=False)

    def mapped(self, view: ReaderView, start: int, end: int) -> None:
        """``view.text[start:end]``, each part mapped as ``view`` maps it."""
        index = bisect.bisect_right(view.ats, start) - 1
        while start < end:
            run = view.runs[index]
            stop = min(end, run.at + run.length)
            if run.literal:
                offset = run.start + start - run.at
                self._add(view.text[start:stop], offset, offset + stop - start, literal=True)
            else:
                self._add(view.text[start:stop], run.start, run.end, literal=False)
            start, index = stop, index + 1

    def add(self, shown: str, start: int, end: int) -> None:
        """``shown``, rendered from all of the source's ``[start, end)``."""
        self._add(shown, start, end, literal=False)

    def text(self, text: str, start: int) -> None:
        """Source text shown as written, but for characters a reader does not see or sees folded."""
        position = 0
        for match in _NOT_ASCII.finditer(text):
            index = match.start()
            folded = _folded(text[index])
            if folded == text[index]:
                continue
            self._add(text[position:index], start + position, start + index, literal=True)
            self._add(folded, start + index, start + index + 1, literal=False)
            position = index + 1
        self._add(text[position:], start + position, start + len(text), literal=True)

    def _add(self, shown: str, start: int, end: int, *, literal: bool) -> None:
        if not literal and _NOT_ASCII.search(shown):
            shown = "".join(_folded(character) for character in shown)
        if not shown:
            return
        self.runs.append(
            _Run(at=self.length, length=len(shown), start=start, end=end, literal=literal)
        )
        self.parts.append(shown)
        self.length += len(shown)


def _undone(hiding: str) -> str:
    return hiding[1:] if hiding.startswith("\\") else html.unescape(hiding)


@cache
def _folded(character: str) -> str:
    """What a reader sees of one character: nothing if it is default-ignorable, else NFKC."""
    if IGNORABLE.fullmatch(character):
        return ""
    return unicodedata.normalize("NFKC", character)


def _visible(token: Token) -> str:
    if token.type in ("softbreak", "hardbreak"):
        return "\n"
    return token.content


def _shown(tokens: list[Token]) -> Iterator[Token]:
    return (
        token
        for token in tokens
        if (token.type in _SHOWN and token.content) or token.type.endswith("break")
    )


class _ContentMap:
    """Offsets in an inline block's content (its lines without their block prefixes) placed in
    the source."""

    def __init__(self, content: str, places: list[tuple[int, int, bool]]) -> None:
        self.line_starts = [0]
        for part in content.split("\n")[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(part) + 1)
        self.places = places

    def whole(self) -> tuple[int, int]:
        return self.places[0][0], self.places[-1][1]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self._at(start)[0], self._at(max(end - 1, start))[1]

    def _at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start, line_end, verbatim = self.places[line]
        column = offset - self.line_starts[line]
        if not verbatim:
            return start, line_end
        return start + column, min(start + column + 1, line_end + 1)


class _Recorded(list[Token]):
    """The inline tokens of one block, each given its span in the block's content as it is made.

    Literal text the parser collects (``pending``) becomes a token when the next token is pushed;
    it is the only token appended with its content already set, and it starts where the text
    began to be collected (``pending_start``, noted by the wrapped rules)."""

    pending_start = 0

    def append(self, token: Token) -> None:
        if token.type == "text" and token.content:
            token.meta[_SPAN] = (self.pending_start, self.pending_start + len(token.content))
        super().append(token)


def _recording(rule: _InlineRule) -> _InlineRule:
    def recorded(state: StateInline, silent: bool) -> bool:
        tokens = state.tokens
        if silent or not isinstance(tokens, _Recorded):
            return rule(state, silent)
        if not state.pending:
            tokens.pending_start = state.pos
        start, count = state.pos, len(tokens)
        if not rule(state, silent):
            return False
        for index in range(count, len(tokens)):
            tokens[index].meta.setdefault(_SPAN, (start, state.pos))
        return True

    return recorded


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    parser.disable(["inline", "text_join"])  # inline is parsed per block, with its spans kept
    parser.inline.ruler2.disable("fragments_join")  # it would merge tokens and their spans
    for name, rule in _INLINE_RULES.items():
        parser.inline.ruler.at(name, _recording(rule))
    return parser
