"""What memory items cite, and which citations the code no longer backs.

An item is a non-blank line of AGENTS.md that is not a heading. It cites what it is about in
code spans: a path (`` `src/app.py` ``), a symbol (`` `fetch_retry` ``) or both
(`` `src/app.py:fetch_retry` ``). The rules are deterministic, so the same memory and code always
give the same verdicts:

- a path has a ``/`` or ends in a common file extension (``README.md``); it holds when the default
  branch tracks that file, or any file under it (a folder);
- a symbol looks like code, not prose: a ``snake_case`` or ``camelCase`` identifier, a dotted
  name (``Client.fetch``: its last part is looked for) or a name ending in ``()``. It holds when
  the cited file, or any file when no file is cited, contains it as a whole word.

Anything else in a code span (a command, a plain word) is no citation and never makes an item
stale.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from memory_action.memory.merge import CONFLICT_END, CONFLICT_MIDDLE, CONFLICT_START
from memory_action.safety.untrusted_markdown import CODE_SPAN

MAX_CITATION_CHARS = 200  # a longer code span is code or a command, no citation
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PATH = re.compile(r"[A-Za-z0-9_.@+-]+(?:/[A-Za-z0-9_.@+-]+)*/?")
# A one-segment name is a file only with a common extension: ``Client.fetch`` is a symbol.
_FILE_EXTENSIONS = frozenset(
    {"c", "cc", "cfg", "cpp", "cs", "css", "go", "h", "hpp", "html", "ini", "java", "js"}
    | {"json", "jsx", "kt", "lock", "md", "proto", "py", "rb", "rs", "sh", "sql", "toml", "ts"}
    | {"tsx", "txt", "xml", "yaml", "yml"}
)
_MARKERS = (CONFLICT_START, CONFLICT_MIDDLE, CONFLICT_END)


class CodeView(Protocol):
    """Read access to the default branch's files."""

    def paths(self) -> frozenset[str]:
        """Every tracked file, as a repository-relative POSIX path."""
        ...

    def read(self, path: str) -> str | None:
        """The file's text; None when it is missing, binary or too large to read."""
        ...


@dataclass(frozen=True, kw_only=True)
class Citation:
    path: str = ""  # "" when only a symbol is cited
    symbol: str = ""  # "" when only a path is cited

    def label(self) -> str:
        return ":".join(part for part in (self.path, self.symbol) if part)


@dataclass(frozen=True, kw_only=True)
class Item:
    line: int  # 1-based line of AGENTS.md
    text: str  # the stripped line
    citations: tuple[Citation, ...]


@dataclass(frozen=True, kw_only=True)
class StaleItem:
    item: Item
    reasons: tuple[str, ...]  # one per citation the code no longer backs


def parse_items(memory: str) -> list[Item]:
    """Memory's items (non-blank lines but headings and conflict markers), with citations."""
    items = []
    for number, raw in enumerate(memory.splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#") or text.startswith(_MARKERS):
            continue
        items.append(
            Item(line=number, text=text, citations=tuple(dict.fromkeys(citations_in(text))))
        )
    return items


def citations_in(text: str) -> Iterator[Citation]:
    for match in CODE_SPAN.finditer(text):
        code = match.group("code")
        citation = parse_citation(code.strip()) if len(code) <= MAX_CITATION_CHARS else None
        if citation is not None:
            yield citation


def parse_citation(span: str) -> Citation | None:
    """The citation a code span holds, or None when it holds none (see the module docstring)."""
    path, colon, symbol = span.partition(":")
    if colon:
        cited = _symbol(symbol)
        return Citation(path=path, symbol=cited) if _is_path(path) and cited else None
    if _is_path(span):
        return Citation(path=span.rstrip("/") if span.endswith("/") else span)
    cited = _symbol(span)
    return Citation(symbol=cited) if cited else None


def _is_path(text: str) -> bool:
    if not _PATH.fullmatch(text) or ".." in text.split("/") or text.startswith("/"):
        return False
    return "/" in text or ("." in text and text.rpartition(".")[2] in _FILE_EXTENSIONS)


def _symbol(text: str) -> str:
    """The name to look for, or "" when ``text`` does not look like code."""
    called = text.endswith("()")
    name = text.removesuffix("()")
    if _DOTTED.fullmatch(name):
        return name.rsplit(".", 1)[1]
    if not _IDENTIFIER.fullmatch(name):
        return ""
    camel = any(c.isupper() for c in name[1:]) and any(c.islower() for c in name)
    code_like = "_" in name.strip("_") or camel
    return name if called or code_like else ""


class CitationChecker:
    """Checks citations against one ``CodeView``; files are read once each."""

    def __init__(self, code: CodeView) -> None:
        self._code = code
        self._paths: frozenset[str] | None = None
        self._texts: dict[str, str | None] = {}
        self._words: frozenset[str] | None = None

    def stale(self, items: Iterable[Item]) -> list[StaleItem]:
        found = []
        for item in items:
            reasons = tuple(r for c in item.citations if (r := self.problem(c)))
            if reasons:
                found.append(StaleItem(item=item, reasons=reasons))
        return found

    def problem(self, citation: Citation) -> str:
        """Why the code no longer backs ``citation``; "" when it does."""
        if citation.path and not self._has_path(citation.path):
            return f"`{citation.path}` is not in the default branch"
        if not citation.symbol:
            return ""
        if citation.path:
            text = self._text(citation.path)
            if text is not None and _has_word(text, citation.symbol):
                return ""
            return f"`{citation.symbol}` is no longer in `{citation.path}`"
        if citation.symbol in self._all_words():
            return ""
        return f"`{citation.symbol}` is in no file of the default branch"

    def digest(self, memory: str, items: Iterable[Item]) -> str:
        """A fingerprint of memory, its citations' verdicts and the cited files' contents: equal
        digests mean a maintenance run would see exactly what the last one saw."""
        hasher = hashlib.sha256(memory.encode())
        for citation in sorted({c for item in items for c in item.citations}, key=Citation.label):
            hasher.update(f"\0{citation.label()}\0{self.problem(citation)}".encode())
            if citation.path and citation.path in self._tracked():
                text = self._text(citation.path) or ""
                hasher.update(hashlib.sha256(text.encode()).digest())
        return hasher.hexdigest()

    def _tracked(self) -> frozenset[str]:
        if self._paths is None:
            self._paths = self._code.paths()
        return self._paths

    def _has_path(self, path: str) -> bool:
        tracked = self._tracked()
        return path in tracked or any(p.startswith(path + "/") for p in tracked)

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self._code.read(path) if path in self._tracked() else None
        return self._texts[path]

    def _all_words(self) -> frozenset[str]:
        if self._words is None:
            words: set[str] = set()
            for path in sorted(self._tracked()):  # read, not kept: a repository can be large
                words.update(_IDENTIFIER.findall(self._code.read(path) or ""))
            self._words = frozenset(words)
        return self._words


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None
