"""Which files the repository's ``.gitattributes`` marks as generated or vendored (Linguist's
``linguist-generated`` / ``linguist-vendored``), and the path patterns that file uses.

Patterns follow gitattributes: a pattern without "/" matches the file name at any depth, a "/"
anywhere else anchors it at the repository root, ``*`` and ``?`` stop at "/", ``**`` spans
folders, and a pattern that names a folder does not reach the files inside it (write ``dir/**``).
"""

from __future__ import annotations

import functools
import re

GITATTRIBUTES = ".gitattributes"  # read at the base commit: a pull request cannot change it
_GENERATED = "linguist-generated"
_VENDORED = "linguist-vendored"
_REASONS = (
    (_GENERATED, "generated (.gitattributes linguist-generated)"),
    (_VENDORED, "vendored (.gitattributes linguist-vendored)"),
)


def generated_or_vendored(attributes_text: str, path: str) -> str | None:
    """Why ``.gitattributes`` says the file is not hand-written, or None.

    The last matching line decides each attribute; ``-attr``, ``attr=false`` and ``!attr``
    undo an earlier line.
    """
    states: dict[str, bool] = {}
    for pattern, attributes in _rules(attributes_text):
        if not matches(pattern, path):
            continue
        for attribute in attributes:
            name, state = _attribute_state(attribute)
            if name in (_GENERATED, _VENDORED):
                states[name] = state
    return next((reason for name, reason in _REASONS if states.get(name)), None)


def matches(pattern: str, path: str) -> bool:
    """Whether a gitattributes pattern matches the file at ``path`` (relative, "/"-separated)."""
    return _compile(pattern).fullmatch(path) is not None


def matches_path_or_folder(pattern: str, path: str) -> bool:
    """Whether the pattern matches the file or one of its folders, as in ``.gitignore``.

    ``docs``, ``docs/`` and ``docs/**`` all match ``docs/index.md``; a trailing "/" matches
    folders only.
    """
    folders = path.split("/")[:-1]
    parents = ["/".join(folders[: depth + 1]) for depth in range(len(folders))]
    if pattern.endswith("/"):
        return any(matches(pattern[:-1], parent) for parent in parents)
    return any(matches(pattern, candidate) for candidate in [*parents, path])


def _rules(text: str) -> list[tuple[str, list[str]]]:
    rules: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        # Comments, macro definitions, and negative patterns (git ignores those in attributes).
        if not line or line.startswith(("#", "[attr]", "!")):
            continue
        pattern, *attributes = line.split()
        rules.append((pattern, attributes))
    return rules


def _attribute_state(attribute: str) -> tuple[str, bool]:
    if attribute.startswith(("-", "!")):
        return attribute[1:], False
    name, equals, value = attribute.partition("=")
    return name, not (equals and value == "false")


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    anchored = "/" in pattern
    body = pattern.removeprefix("/")
    regex = _translate(body)
    return re.compile(regex if anchored else f"(?:.*/)?{regex}", re.DOTALL)


def _translate(pattern: str) -> str:
    """A regular expression for one wildmatch pattern (``**`` only as a whole path segment)."""
    segments = pattern.split("/")
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            # "**/" at the start or in the middle: zero or more folders; "/**" at the end:
            # everything inside.
            parts.append(".+" if last else "(?:.*/)?")
            continue
        parts.append(_translate_segment(segment) + ("" if last else "/"))
    return "".join(parts)


def _translate_segment(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            while index + 1 < len(segment) and segment[index + 1] == "*":
                index += 1  # "**" inside a segment is an ordinary "*"
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and index + 1 < len(segment):
            index += 1
            out.append(re.escape(segment[index]))
        elif char == "[" and (end := _class_end(segment, index)) > 0:
            out.append(_translate_class(segment[index + 1 : end]))
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """The index of the "]" that closes the class opened at ``start``, or -1."""
    index = start + 1
    if index < len(segment) and segment[index] in "!^":
        index += 1
    if index < len(segment) and segment[index] == "]":
        index += 1  # a "]" right after "[" (or "[!") is a member, not the end
    return segment.find("]", index)


def _translate_class(members: str) -> str:
    negated = members[:1] in ("!", "^")
    if negated:
        members = members[1:]
    escaped = members.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    # Keep "-" ranges as they are; "^" is only special first, which "negated" already handled.
    escaped = escaped.replace("^", "\\^")
    return f"[^/{escaped}]" if negated else f"(?!/)[{escaped}]"
