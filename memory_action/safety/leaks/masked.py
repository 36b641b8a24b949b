"""Layer (c): the values this run masked, in every encoding they can leak in.

Plain, URL-encoded (either hex case, ``%20`` or ``+``, every byte encoded, or only some), hex
(either case, also ``\\x``-escaped, also a spaced hexdump: ``5a 78 39``, ``xxd``, ``hexdump -C``),
``\\u00XX`` / ``\\u{XX}`` / ``\\xXX`` escapes (JSON, JavaScript, Python; all or some characters),
and base64 (standard and URL-safe, at any of the three byte alignments, so the value is found
inside a larger encoded string like ``base64("x-access-token:" + token)``). Each form is also
looked for in the text with its line breaks taken out, so a value wrapped or split over two
lines (``abc\\n  def``, a base64 block folded at 76 columns, ``"abc" +\\n "def"``, a ``\\x``
escape cut after its backslash, a ``\\n`` escape inside a string, the next list item) is found
too. A value split in pieces some other way leaks through its largest piece: a fragment of at
least half the value and at least ``MIN_FRAGMENT_LENGTH`` characters is a leak, and so is the
rest of the value when it follows (or precedes) the fragment closely.

Every other view of the text (decoded, unwrapped, a dump's separators taken out) is made with one
regular-expression substitution; where its characters came from is worked out only when a value
is found in it.
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import quote, quote_plus

from memory_action.safety.leaks.candidate import MASKED_VALUE, PRIORITY, Candidate

MIN_MASKED_LENGTH = 4  # what ``Workflow.add_mask`` keeps, too
MIN_FRAGMENT_LENGTH = 12  # a shorter piece of a value would match by chance
_MIN_ENCODED_LENGTH = 8  # an encoded form shorter than this would match by chance
_MIN_SPLIT_LENGTH = 8  # a shorter value split over two lines would match by chance
_NEAR = 200  # how far from a fragment the rest of its value is looked for
_MAX_WINDOW = 24  # fragments are found by windows of at most this length (see _fragments)

_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
_TO_URLSAFE = str.maketrans("+/", "-_")
_PERCENT_HEX = re.compile(r"%[0-9A-F]{2}")
# A line break and what wraps it: trailing blanks, a shell continuation, the next indent, Markdown
# quotes and list markers, or a string literal closed and continued on the next line
# ("abc" +\n "def").
_WRAP = r"\r?\n[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?"
_LINE_BREAK = re.compile(
    r"""["'][ \t]*(?:[+.&][ \t]*)?\\?""" + _WRAP + r"""["']|[ \t]*\\?""" + _WRAP
)
# The same without taking a backslash before the break as a continuation: the break may fall
# right after the backslash of a \x escape.
_LINE_BREAK_AFTER_ESCAPE = re.compile(r"[ \t]*" + _WRAP)
# A line break written as an escape inside a string literal (JSON, YAML, a shell $'...').
_ESCAPED_LINE_BREAK = re.compile(r"(?:\\r)?\\n")
# Percent-encoded octets: one ASCII character, or a run of the octets of non-ASCII ones.
_PERCENT_OCTETS = re.compile(r"%[0-7][0-9A-Fa-f]|(?:%[89A-Fa-f][0-9A-Fa-f])+")
# Character escapes: \uXXXX (a surrogate pair as one), \u{X...} and \xXX for ASCII.
_CHARACTER_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}"
    r"|\\u\{[0-9A-Fa-f]{1,6}\}|\\x[0-7][0-9A-Fa-f]"
)
# What separates the bytes of a hexdump: blanks or a colon between hex digits, and at a line's
# end the dump's text column (``xxd``'s, ``hexdump -C``'s |...|) and the next line's offset.
_DUMP_GAP = re.compile(
    r"(?<=[0-9A-Fa-f])(?:[ \t]{0,8}(?:[ \t]{2}(?:\|[^|\n]{1,16}\||[^\n]{1,16}))?[ \t]{0,8}"
    r"\r?\n[ \t]{0,8}(?:[0-9A-Fa-f]{4,8}:?[ \t]{1,8})?|[ \t]{1,2}|:)(?=[0-9A-Fa-f])"
)
_DUMP_HINT = re.compile(r"[0-9A-Fa-f]{2}(?:[ \t]{1,2}|:)[0-9A-Fa-f]{2}")


def masked_forms(value: str) -> tuple[list[str], list[str]]:
    """The forms a masked value can leak in: (plain, URL- and hex-encoded forms, base64 cores).

    A base64 core is the part of the value's encoding that does not depend on its neighbours,
    for each of the three byte alignments, in the standard and the URL-safe alphabets.
    """
    plain = [value]
    raw = value.encode("utf-8")
    every_byte = "".join(f"%{byte:02X}" for byte in raw)  # RFC 3986 allows any octet encoded
    for encoded in (quote(value, safe=""), quote_plus(value, safe=""), every_byte):
        lower_hex = _PERCENT_HEX.sub(lambda m: m.group(0).lower(), encoded)
        plain.extend(form for form in (encoded, lower_hex) if form not in plain)
    plain.extend(form for form in _hex_forms(raw) if form not in plain)
    cores: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
        if len(core) < _MIN_ENCODED_LENGTH:
            continue
        cores.extend(form for form in (core, core.translate(_TO_URLSAFE)) if form not in cores)
    return plain, cores


def _hex_forms(raw: bytes) -> list[str]:
    hex_lower = raw.hex()
    forms = (hex_lower, hex_lower.upper(), "".join(f"\\x{byte:02x}" for byte in raw))
    return [form for form in forms if len(form) >= _MIN_ENCODED_LENGTH]


Forms = tuple[list[str], list[str]]  # what ``masked_forms`` gives


def masked_candidates(
    text: str, masked: Iterable[str], forms_of: Callable[[str], Forms] | None = None
) -> Iterator[Candidate]:
    """Each place ``text`` holds a masked value in some form; ``forms_of``: ``masked_forms``,
    or a memo of it kept for the run (a value's forms cost more than scanning a short text)."""
    forms_of = forms_of or masked_forms
    values = usable_masked(masked)
    if not values:
        return
    unwrapped = _unwrapped_forms(text)
    decoded = _decoded_forms(text)
    dump = _View(text, _DUMP_GAP, "") if _DUMP_HINT.search(text) else None
    for value in values:
        plain, cores = forms_of(value)
        yield from _found_in(text, plain, cores)
        yield from _fragments(text, value)
        for view in decoded:
            yield from view.originals(_found_in(view.text, [value], []))
        if dump is not None:
            yield from dump.originals(_found_in(dump.text, _hex_forms(value.encode()), []))
        if len(value) < _MIN_SPLIT_LENGTH:
            continue
        for joined in unwrapped:
            yield from joined.originals(_found_in(joined.text, plain, cores))


def _unwrapped_forms(text: str) -> list[_View]:
    """``text`` with its line breaks taken out, each way a break can wrap a value."""
    forms = []
    if "\n" in text:
        forms.append(_View(text, _LINE_BREAK, ""))
        if "\\\n" in text or "\\\r\n" in text:
            forms.append(_View(text, _LINE_BREAK_AFTER_ESCAPE, ""))
    if "\\n" in text:
        forms.append(_View(text, _ESCAPED_LINE_BREAK, ""))
    return forms


def _decoded_forms(text: str) -> list[_View]:
    """``text`` with its percent-encoded octets decoded (also ``+`` as a space), and with its
    character escapes decoded: a value only partly encoded reads whole there."""
    forms = []
    if "%" in text:
        forms.append(_View(text, _PERCENT_OCTETS, _decode_octets))
        if "+" in text:
            plus = re.compile(_PERCENT_OCTETS.pattern + r"|\+")
            forms.append(
                _View(text, plus, lambda m: " " if m.group(0) == "+" else _decode_octets(m))
            )
    if "\\u" in text or "\\x" in text:
        forms.append(_View(text, _CHARACTER_ESCAPE, _decode_escape))
    return forms


def _decode_octets(match: re.Match[str]) -> str:
    return bytes.fromhex(match.group(0).replace("%", "")).decode("utf-8", "replace")


def _decode_escape(match: re.Match[str]) -> str:
    escape = match.group(0)
    if escape.startswith("\\u{"):
        code = int(escape[3:-1], 16)
        return chr(code) if code <= 0x10FFFF else escape
    if len(escape) == 12:  # a surrogate pair
        high, low = int(escape[2:6], 16), int(escape[8:12], 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return chr(int(escape[2:], 16))


def usable_masked(masked: Iterable[str]) -> list[str]:
    """Each masked value (and each line of a multi-line one) long enough to look for."""
    values: set[str] = set()
    for value in masked:
        for line in {value, *value.splitlines()}:
            part = line.strip()
            if len(part) >= MIN_MASKED_LENGTH:
                values.add(part)
    return sorted(values, key=lambda v: (-len(v), v))


def _found_in(text: str, plain: list[str], cores: list[str]) -> Iterator[Candidate]:
    priority = PRIORITY[MASKED_VALUE]
    for form in plain:
        for start, end in _occurrences(text, form):
            yield Candidate(start=start, end=end, priority=priority, kind=MASKED_VALUE)
    for core in cores:
        yield from _encoded_runs(text, core, priority)


def _encoded_runs(text: str, core: str, priority: int) -> Iterator[Candidate]:
    """Each whole base64 run holding ``core``: its edges hold bits of the value too."""
    start = text.find(core)
    while start != -1:
        lo, hi = start, start + len(core)
        while lo > 0 and text[lo - 1] in _BASE64_CHARS:
            lo -= 1
        while hi < len(text) and text[hi] in _BASE64_CHARS:
            hi += 1
        yield Candidate(start=lo, end=hi, priority=priority, kind=MASKED_VALUE)
        start = text.find(core, hi)


def _occurrences(text: str, needle: str) -> Iterator[tuple[int, int]]:
    """Spans of ``needle`` in ``text``, overlapping occurrences joined into one span."""
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        following = text.find(needle, start + 1)
        while following != -1 and following < end:
            end = following + len(needle)
            following = text.find(needle, following + 1)
        yield start, end
        start = following


# --- a value in pieces ---------------------------------------------------------------------------


def fragment_length(value: str) -> int:
    """The shortest piece of ``value`` that is a leak: half of it, and ``MIN_FRAGMENT_LENGTH``."""
    return max(MIN_FRAGMENT_LENGTH, -(-len(value) // 2))


def _fragments(text: str, value: str) -> Iterator[Candidate]:
    """Each piece of ``value`` in ``text`` of at least ``fragment_length``, with the rest of the
    value where it follows or precedes the piece within ``_NEAR`` characters.

    Linear: the value's windows of ``width`` characters at every ``step``-th offset are looked
    for with ``str.find``; any piece of ``least`` characters holds one of them whole, and each
    window found is grown into its piece once (``grown`` keeps how far each alignment got).
    """
    least = fragment_length(value)
    if least > len(value):
        return
    width = min(least, _MAX_WINDOW)
    step = least - width + 1
    grown: dict[int, int] = {}  # text position of the value's start → end of the piece found
    priority = PRIORITY[MASKED_VALUE]
    for offset in range(0, len(value) - width + 1, step):
        window = value[offset : offset + width]
        at = text.find(window)
        while at != -1:
            alignment = at - offset
            if grown.get(alignment, -1) < at + width:
                start, end = _grow(text, value, at, offset, width)
                grown[alignment] = end
                if end - start >= least:
                    head, tail = start - alignment, end - alignment
                    yield Candidate(start=start, end=end, priority=priority, kind=MASKED_VALUE)
                    yield from _rest(text, value[:head], value[tail:], start, end)
            at = text.find(window, at + 1)


def _grow(text: str, value: str, at: int, offset: int, width: int) -> tuple[int, int]:
    """The span of ``text`` around ``text[at:at + width] == value[offset:offset + width]`` that
    matches ``value`` at the same alignment."""
    start, head = at, offset
    while head > 0 and start > 0 and text[start - 1] == value[head - 1]:
        start, head = start - 1, head - 1
    end, tail = at + width, offset + width
    while tail < len(value) and end < len(text) and text[end] == value[tail]:
        end, tail = end + 1, tail + 1
    return start, end


def _rest(text: str, before: str, after: str, start: int, end: int) -> Iterator[Candidate]:
    """The rest of a value found in part: ``before`` shortly before it, ``after`` shortly after."""
    priority = PRIORITY[MASKED_VALUE]
    if len(after) >= MIN_MASKED_LENGTH:
        found = text.find(after, end, end + _NEAR + len(after))
        if found != -1:
            yield Candidate(
                start=found, end=found + len(after), priority=priority, kind=MASKED_VALUE
            )
    if len(before) >= MIN_MASKED_LENGTH:
        found = text.rfind(before, max(0, start - _NEAR - len(before)), start)
        if found != -1:
            yield Candidate(
                start=found, end=found + len(before), priority=priority, kind=MASKED_VALUE
            )


# --- views of the text, mapped back --------------------------------------------------------------


class _View:
    """``text`` with each match of ``pattern`` replaced (by ``replace``, a string or a function
    of the match), and where each character of the view came from, worked out on first use: a
    replacement's characters come from the whole match, the others from themselves."""

    def __init__(
        self,
        text: str,
        pattern: re.Pattern[str],
        replace: str | Callable[[re.Match[str]], str],
    ) -> None:
        self._original = text
        self._pattern = pattern
        self._replace = replace
        self.text = pattern.sub(replace, text)
        # Segments of the view: where each starts in the view and in the original, and the end
        # in the original of a replaced one (-1 for one kept as it is).
        self._view_starts: list[int] = []
        self._original_starts: list[int] = []
        self._replaced_ends: list[int] = []

    def originals(self, candidates: Iterable[Candidate]) -> Iterator[Candidate]:
        for candidate in candidates:
            yield self._original_of(candidate)

    def _original_of(self, candidate: Candidate) -> Candidate:
        if not self._view_starts:
            self._map()
        start = self._to_original(candidate.start)[0]
        end = self._to_original(candidate.end - 1)[1]
        return Candidate(start=start, end=end, priority=candidate.priority, kind=candidate.kind)

    def _map(self) -> None:
        position = joined = 0
        for match in self._pattern.finditer(self._original):
            self._segment(joined, position, -1)
            joined += match.start() - position
            replaced = self._replace if isinstance(self._replace, str) else self._replace(match)
            if replaced:
                self._segment(joined, match.start(), match.end())
                joined += len(replaced)
            position = match.end()
        self._segment(joined, position, -1)

    def _segment(self, view_start: int, original_start: int, replaced_end: int) -> None:
        self._view_starts.append(view_start)
        self._original_starts.append(original_start)
        self._replaced_ends.append(replaced_end)

    def _to_original(self, index: int) -> tuple[int, int]:
        """The span of the original text that the view's character ``index`` came from."""
        segment = bisect.bisect_right(self._view_starts, index) - 1
        if self._replaced_ends[segment] != -1:
            return self._original_starts[segment], self._replaced_ends[segment]
        original = self._original_starts[segment] + index - self._view_starts[segment]
        return original, original + 1
