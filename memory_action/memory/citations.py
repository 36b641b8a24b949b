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
from collections.abc import Iterable, Iterator, Mapping, Sequence
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
_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")  # a cited symbol must be one of these in its file
_EMPTY_SHA256 = hashlib.sha256(b"").digest()
READ_BATCH = 256  # files a ``CodeView.read_many`` call reads: few calls, bounded memory


class CodeView(Protocol):
    """Read access to the default branch's files."""

    def paths(self) -> frozenset[str]:
        """Every tracked file, as a repository-relative POSIX path."""
        ...

    def read_many(self, paths: Sequence[str]) -> Mapping[str, str | None]:
        """Each file's text; None when it is missing, binary or too large to read. One call
        reads many files at once (one git process for a checkout)."""
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


@dataclass(frozen=True, kw_only=True)
class _CitedFile:
    words: frozenset[str]  # its maximal runs of [A-Za-z0-9_]: a symbol is a whole word in it
    sha256: bytes


class CitationChecker:
    """Checks citations against one ``CodeView``. Each distinct citation is judged once, and
    each file read once, the cited files in batches (``CodeView.read_many``), so memory whose
    items all cite something costs one pass, not a look-up per item."""

    def __init__(self, code: CodeView) -> None:
        self._code = code
        self._paths: frozenset[str] | None = None
        self._folders: frozenset[str] | None = None
        self._files: dict[str, _CitedFile | None] = {}
        self._verdicts: dict[Citation, str] = {}
        self._words: frozenset[str] | None = None

    def read_cited(self, items: Iterable[Item]) -> None:
        """Read the files that ``items`` cite a symbol in, in batches: ``stale`` of these items
        then reads no file."""
        self._load(c.path for item in items for c in item.citations if c.path and c.symbol)

    def stale(self, items: Iterable[Item]) -> list[StaleItem]:
        listed = list(items)
        self.read_cited(listed)
        found = []
        for item in listed:
            reasons = tuple(r for c in item.citations if (r := self.problem(c)))
            if reasons:
                found.append(StaleItem(item=item, reasons=reasons))
        return found

    def problem(self, citation: Citation) -> str:
        """Why the code no longer backs ``citation``; "" when it does."""
        if citation not in self._verdicts:
            self._verdicts[citation] = self._judge(citation)
        return self._verdicts[citation]

    def _judge(self, citation: Citation) -> str:
        if citation.path and not self._has_path(citation.path):
            return f"`{citation.path}` is not in the default branch"
        if not citation.symbol:
            return ""
        if citation.path:
            cited = self._file(citation.path)
            if cited is not None and citation.symbol in cited.words:
                return ""
            return f"`{citation.symbol}` is no longer in `{citation.path}`"
        if citation.symbol in self._all_words():
            return ""
        return f"`{citation.symbol}` is in no file of the default branch"

    def digest(self, memory: str, items: Iterable[Item]) -> str:
        """A fingerprint of memory, its citations' verdicts and the cited files' contents: equal
        digests mean a maintenance run would see exactly what the last one saw."""
        hasher = hashlib.sha256(memory.encode())
        citations = sorted({c for item in items for c in item.citations}, key=Citation.label)
        self._load(c.path for c in citations if c.path)
        for citation in citations:
            hasher.update(f"\0{citation.label()}\0{self.problem(citation)}".encode())
            if citation.path and citation.path in self._tracked():
                cited = self._file(citation.path)
                hasher.update(cited.sha256 if cited is not None else _EMPTY_SHA256)
        return hasher.hexdigest()

    def _tracked(self) -> frozenset[str]:
        if self._paths is None:
            self._paths = self._code.paths()
        return self._paths

    def _has_path(self, path: str) -> bool:
        if self._folders is None:
            self._folders = frozenset(
                path.rsplit("/", depth)[0]
                for path in self._tracked()
                for depth in range(1, path.count("/") + 1)
            )
        return path in self._tracked() or path in self._folders

    def _load(self, paths: Iterable[str]) -> None:
        """Read the tracked ``paths`` not read yet, in one batch."""
        tracked = self._tracked()
        wanted = sorted({p for p in paths if p in tracked and p not in self._files})
        for start in range(0, len(wanted), READ_BATCH):
            chunk = wanted[start : start + READ_BATCH]
            texts = self._code.read_many(chunk)
            for path in chunk:
                text = texts.get(path)
                self._files[path] = None if text is None else _cited_file(text)

    def _file(self, path: str) -> _CitedFile | None:
        if path not in self._tracked():
            return None
        self._load([path])
        return self._files[path]

    def _all_words(self) -> frozenset[str]:
        if self._words is None:
            words: set[str] = set()
            tracked = sorted(self._tracked())
            for start in range(0, len(tracked), READ_BATCH):  # read, not kept: it can be large
                for text in self._code.read_many(tracked[start : start + READ_BATCH]).values():
                    words.update(_IDENTIFIER.findall(text or ""))
            self._words = frozenset(words)
        return self._words


def _cited_file(text: str) -> _CitedFile:
    return _CitedFile(
        words=frozenset(_WORD_RUN.findall(text)), sha256=hashlib.sha256(text.encode()).digest()
    )
