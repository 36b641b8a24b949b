"""Layer (c): the values this run masked, in every encoding they can leak in.

Plain, URL-encoded (either hex case, ``%20`` or ``+``, or every byte encoded), hex (either case,
also ``\\x``-escaped), and base64 (standard and URL-safe, at any of the three byte alignments, so
the value is found inside a larger encoded string like ``base64("x-access-token:" + token)``).
Each form is also looked for in the text with its line breaks taken out, so a value wrapped or
split over two lines (``abc\\n  def``, a base64 block folded at 76 columns, ``"abc" +\\n "def"``,
a ``\\x`` escape cut after its backslash, a ``\\n`` escape inside a string) is found too.
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Iterable, Iterator
from urllib.parse import quote, quote_plus

from memory_action.safety.leaks.candidate import MASKED_VALUE, PRIORITY, Candidate

MIN_MASKED_LENGTH = 4  # what ``Workflow.add_mask`` keeps, too
_MIN_ENCODED_LENGTH = 8  # an encoded form shorter than this would match by chance
_MIN_SPLIT_LENGTH = 8  # a shorter value split over two lines would match by chance

_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
_TO_URLSAFE = str.maketrans("+/", "-_")
_PERCENT_HEX = re.compile(r"%[0-9A-F]{2}")
# A line break and what wraps it: trailing blanks, a shell continuation, the next indent, Markdown
# quotes, or a string literal closed and continued on the next line ("abc" +\n "def").
_WRAP = r"\r?\n[ \t]*(?:>[ \t]*)*"
_LINE_BREAK = re.compile(
    r"""["'][ \t]*(?:[+.&][ \t]*)?\\?""" + _WRAP + r"""["']|[ \t]*\\?""" + _WRAP
)
# The same without taking a backslash before the break as a continuation: the break may fall
# right after the backslash of a \x escape.
_LINE_BREAK_AFTER_ESCAPE = re.compile(r"[ \t]*" + _WRAP)
# A line break written as an escape inside a string literal (JSON, YAML, a shell $'...').
_ESCAPED_LINE_BREAK = re.compile(r"(?:\\r)?\\n")


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
    hex_lower = raw.hex()
    for form in (hex_lower, hex_lower.upper(), "".join(f"\\x{byte:02x}" for byte in raw)):
        if len(form) >= _MIN_ENCODED_LENGTH and form not in plain:
            plain.append(form)
    cores: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
        if len(core) < _MIN_ENCODED_LENGTH:
            continue
        cores.extend(form for form in (core, core.translate(_TO_URLSAFE)) if form not in cores)
    return plain, cores


def masked_candidates(text: str, masked: Iterable[str]) -> Iterator[Candidate]:
    values = usable_masked(masked)
    if not values:
        return
    unwrapped = _unwrapped_forms(text)
    for value in values:
        plain, cores = masked_forms(value)
        yield from _found_in(text, plain, cores)
        if len(value) < _MIN_SPLIT_LENGTH:
            continue
        for joined in unwrapped:
            for candidate in _found_in(joined.text, plain, cores):
                yield joined.original(candidate)


def _unwrapped_forms(text: str) -> list[_Unwrapped]:
    """``text`` with its line breaks taken out, each way a break can wrap a value."""
    forms = []
    if "\n" in text:
        forms.append(_Unwrapped(text, _LINE_BREAK))
        if "\\\n" in text or "\\\r\n" in text:
            forms.append(_Unwrapped(text, _LINE_BREAK_AFTER_ESCAPE))
    if "\\n" in text:
        forms.append(_Unwrapped(text, _ESCAPED_LINE_BREAK))
    return forms


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


class _Unwrapped:
    """``text`` with its line breaks (and the blanks around them) taken out, mapped back."""

    def __init__(self, text: str, line_break: re.Pattern[str]) -> None:
        pieces: list[str] = []
        self._joined_starts: list[int] = []  # where each kept piece starts in ``self.text``
        self._original_starts: list[int] = []  # ... and in the original text
        position = joined = 0
        for match in line_break.finditer(text):
            pieces.append(text[position : match.start()])
            self._joined_starts.append(joined)
            self._original_starts.append(position)
            joined += match.start() - position
            position = match.end()
        pieces.append(text[position:])
        self._joined_starts.append(joined)
        self._original_starts.append(position)
        self.text = "".join(pieces)

    def original(self, candidate: Candidate) -> Candidate:
        start = self._to_original(candidate.start)
        end = self._to_original(candidate.end - 1) + 1
        return Candidate(start=start, end=end, priority=candidate.priority, kind=candidate.kind)

    def _to_original(self, index: int) -> int:
        piece = bisect.bisect_right(self._joined_starts, index) - 1
        return self._original_starts[piece] + index - self._joined_starts[piece]
