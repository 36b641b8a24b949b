"""A secret written so that GitHub shows it while the text as written does not hold it.

``rendered_forms(secret)`` builds each form from the secret itself (no example typed in): a
backslash escape of its first punctuation character, that character as a decimal, hex and named
character reference, emphasis splitting it (``**`` around every other 4 characters; ``_``
around its tail after a punctuation character other than ``_``: CommonMark has no ``_``
emphasis between two letters),
each class of invisible character inserted in its middle, and its full-width spelling.
``as_seen`` is the tests' own over-approximation of what a reader sees, to judge whether a form
survived anywhere: it removes more than GitHub does (every backslash, reference and invisible
character, also in code, where a reader sees them and reads through them), but for emphasis: in
code, as CommonMark has it, ``**`` and ``_`` are the characters a reader sees (``ab**cd``).
"""

from __future__ import annotations

import html
import html.entities
import re
import unicodedata

from markdown_it import MarkdownIt

__all__ = ["INVISIBLE", "as_seen", "rendered_forms"]

# One of each class of invisible character (Unicode's Default_Ignorable_Code_Point).
INVISIBLE = {
    "zero-width space": "\u200b",
    "bidi override": "\u202e",
    "bidi isolate": "\u2066",
    "Arabic letter mark": "\u061c",
    "variation selector": "\ufe0f",
    "variation selector supplement": "\U000e0100",
    "combining grapheme joiner": "\u034f",
    "tag character": "\U000e0041",
}
_NAMED = {value: name for name, value in html.entities.html5.items() if name.endswith(";")}
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~](?=[A-Za-z0-9])")
_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_EMPHASIS = re.compile(r"[*_]")
_UNSEEN = re.compile(
    r"[\\`]|[\u00ad\u034f\u061c\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u206f\ufe00-\ufe0f\ufeff\U000e0000-\U000e0fff]"
)


def rendered_forms(secret: str) -> dict[str, str]:
    """Each form of ``secret`` (module docstring) by its name; a form the secret cannot take
    (no punctuation to escape, no character with a named reference) is left out."""
    forms: dict[str, str] = {}
    middle = len(secret) // 2
    if punctuation := _PUNCTUATION.search(secret):
        at, char = punctuation.start(), punctuation.group(0)
        head, tail = secret[:at], secret[at + 1 :]
        forms["backslash escape"] = f"{head}\\{char}{tail}"
        forms["decimal reference"] = f"{head}&#{ord(char)};{tail}"
        forms["hex reference"] = f"{head}&#x{ord(char):x};{tail}"
        if char in _NAMED:
            forms["named reference"] = f"{head}&{_NAMED[char]}{tail}"
        if char != "_":  # a "_" run next to letters on both sides is no emphasis
            forms["_ emphasis"] = f"{head}{char}_{tail}_"
    forms["** emphasis"] = _split_by_strong(secret)
    for name, invisible in INVISIBLE.items():
        forms[name] = f"{secret[:middle]}{invisible}{secret[middle:]}"
    forms["full-width"] = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in secret)
    return forms


def _split_by_strong(secret: str) -> str:
    """``secret`` cut in runs of 4 characters (more next to punctuation), every other one made
    strong: in prose the reader sees the secret; in code, where emphasis is literal, the reader
    sees it cut by asterisks, which is not the secret (no run of 8 of it is shown). A cut falls
    between two letters or digits: next to punctuation ``**`` is no emphasis in CommonMark."""
    cuts, start = [0], 0
    while start + 4 < len(secret):
        end = next(
            (e for e in range(start + 4, len(secret)) if secret[e - 1 : e + 1].isalnum()),
            len(secret),
        )
        if end < len(secret):
            cuts.append(end)
        start = end
    chunks = [secret[a:b] for a, b in zip(cuts, [*cuts[1:], len(secret)], strict=True)]
    return "".join(f"**{chunk}**" if index % 2 else chunk for index, chunk in enumerate(chunks))


def as_seen(text: str) -> str:
    """``text`` with references decoded, NFKC-folded, and invisible characters and the
    characters of Markdown's escapes and emphasis removed (emphasis outside code only): more
    than a reader loses. Its parts as markdown-it finds them, joined with nothing between."""
    parts: list[str] = []
    for block in _PARSER.parse(text):
        if block.type in ("fence", "code_block"):
            parts.append(_seen(block.content, in_code=True))
        elif block.type == "html_block":
            parts.append(_seen(block.content, in_code=False))
        for child in block.children or []:
            parts.append(_seen(child.content, in_code=child.type == "code_inline"))
    return "".join(parts)


def _seen(text: str, *, in_code: bool) -> str:
    seen = _UNSEEN.sub("", unicodedata.normalize("NFKC", html.unescape(text)))
    return seen if in_code else _EMPHASIS.sub("", seen)
