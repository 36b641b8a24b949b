"""Finding secrets in memory text, and redacting them: pure functions, no I/O.

``find_secrets`` runs the detector's layers (see ``safety.leaks``): (a) token formats providers
document, private keys and JWTs; (b) values in credential positions (names, flags, headers, URL
userinfo, connection strings), judged by their shape only there; (c) every value the run masked,
in every encoding. Findings never carry the secret itself: only its kind and where it is, so
they can be logged, counted and reported.

Every detector is anchored on a literal (a prefix, a credential word, ``://``) and every
quantifier is bounded, so a MiB of memory is scanned in about a second at worst. A run reads its
memory many times (restoring, prompting, checking edits, saving, publishing): inside
``scan_once()`` each text is scanned once and its findings are kept by the text's digest.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from memory_action.safety.leaks.candidate import (
    CREDENTIAL,
    JWT,
    MASKED_VALUE,
    PRIVATE_KEY,
    URL_PASSWORD,
    Candidate,
    Detector,
)
from memory_action.safety.leaks.formats import (
    jwt_candidates,
    private_key_candidates,
    putty_key_candidates,
    token_candidates,
)
from memory_action.safety.leaks.masked import masked_candidates, masked_forms
from memory_action.safety.leaks.position import context_candidates
from memory_action.safety.leaks.shape import shannon_entropy
from memory_action.safety.reader_view import reader_view

__all__ = [
    "ALL_LAYERS",
    "CREDENTIAL",
    "JWT",
    "MASKED_VALUE",
    "PRIVATE_KEY",
    "URL_PASSWORD",
    "Layer",
    "RefusalLog",
    "ScanCache",
    "SecretFinding",
    "describe",
    "find_secrets",
    "masked_forms",
    "redact",
    "replace_findings",
    "scan_once",
    "shannon_entropy",
]


class Layer(Enum):
    """The detector's layers, each measured on its own in ``bench/scrubber.py``."""

    FORMATS = "formats"  # documented token formats, private keys, JWTs
    CONTEXT = "context"  # values in credential positions
    MASKED = "masked"  # the run's masked values, in every encoding


ALL_LAYERS = frozenset(Layer)
_LAYER_DETECTORS: dict[Layer, tuple[Detector, ...]] = {
    Layer.FORMATS: (
        private_key_candidates,
        putty_key_candidates,
        token_candidates,
        jwt_candidates,
    ),
    Layer.CONTEXT: (context_candidates,),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretFinding:
    """A secret of ``kind`` at ``text[start:end]``; the value itself is never kept."""

    kind: str
    start: int
    end: int


def find_secrets(
    text: str, masked: Iterable[str] = (), *, layers: Collection[Layer] = ALL_LAYERS
) -> list[SecretFinding]:
    """Every secret in ``text``: non-overlapping (overlaps are merged), sorted by position."""
    cache = _RUN_CACHE.get()
    if cache is None or len(text) < ScanCache.MIN_LENGTH:
        return _scan(text, masked, layers)
    masked = tuple(masked)
    key = ScanCache.key(text, masked, layers)
    found = cache.get(key)
    if found is None:
        found = tuple(_scan(text, masked, layers))
        cache.put(key, found)
    return list(found)


def _scan(text: str, masked: Iterable[str], layers: Collection[Layer]) -> list[SecretFinding]:
    candidates: list[Candidate] = []
    for layer in layers:
        for detector in _LAYER_DETECTORS.get(layer, ()):
            candidates.extend(detector(text))
    if Layer.MASKED in layers:
        candidates.extend(masked_candidates(text, masked))
    return _merge(candidates)


# --- scanning each text once per run -------------------------------------------------------------


class ScanCache:
    """Findings by the digest of the text, the masked values and the layers: a bounded LRU.

    The key holds digests only (never a text or a masked value), and the findings hold only
    kinds and positions, so the cache keeps nothing secret.
    """

    MIN_LENGTH = 1024  # shorter texts are scanned faster than they are looked up and kept
    MAX_ENTRIES = 256

    def __init__(self) -> None:
        self._found: OrderedDict[bytes, tuple[SecretFinding, ...]] = OrderedDict()
        self._lock = threading.Lock()  # tool calls may run in parallel threads
        # How often each key was asked for and scanned, for tests and benchmarks.
        self.asked: Counter[bytes] = Counter()
        self.scanned: Counter[bytes] = Counter()

    @staticmethod
    def key(text: str, masked: Sequence[str], layers: Collection[Layer]) -> bytes:
        digest = hashlib.blake2b(digest_size=20)
        digest.update(text.encode("utf-8", "surrogatepass"))
        for part in (*sorted(set(masked)), *sorted(layer.value for layer in layers)):
            digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
        return digest.digest()

    def get(self, key: bytes) -> tuple[SecretFinding, ...] | None:
        with self._lock:
            self.asked[key] += 1
            found = self._found.get(key)
            if found is not None:
                self._found.move_to_end(key)
            return found

    def put(self, key: bytes, found: tuple[SecretFinding, ...]) -> None:
        with self._lock:
            self.scanned[key] += 1
            self._found[key] = found
            self._found.move_to_end(key)
            while len(self._found) > self.MAX_ENTRIES:
                self._found.popitem(last=False)


# What can make a reader see a secret the text as written does not hold: markup that joins the
# text around it (emphasis, strikethrough, code, links, HTML), escapes, character references,
# any character outside ASCII (invisible ones, full-width forms). Text without them reads as is.
_RENDERED_DIFFERENTLY = re.compile(r"[\\&*_~`<\[]|[^\x00-\x7f]")
_RUN_CACHE: ContextVar[ScanCache | None] = ContextVar("memory_agent_scan_cache", default=None)


@contextmanager
def scan_once() -> Iterator[ScanCache]:
    """Within the block (a run), each text is scanned for secrets once; outside it, every time.

    The cache lives as long as the outermost block, so nothing carries over from one run (or
    test) to the next; a block inside it shares it. Threads started with the run's context
    (the agent's worker, the pools LangChain runs tools in) share it too.
    """
    active = _RUN_CACHE.get()
    if active is not None:
        yield active
        return
    cache = ScanCache()
    token = _RUN_CACHE.set(cache)
    try:
        yield cache
    finally:
        _RUN_CACHE.reset(token)


def redact(text: str, masked: Iterable[str] = ()) -> tuple[str, list[SecretFinding]]:
    """``text`` with each secret replaced by ``[REDACTED <kind>]``, and what was replaced: the
    secrets in the text as written and those only a reader of it on GitHub sees
    (``reader_view``), each redacted in the source span that renders to it. Every redaction is
    this one, so no text is first redacted as written and then left with a piece a reader still
    joins to a secret (``k8sDeployKey&#45;[REDACTED]`` would show the value's head)."""
    values = tuple(masked)
    findings = find_secrets(text, values)
    if _RENDERED_DIFFERENTLY.search(text):
        findings = _merged_findings(findings, list(_seen_by_a_reader(text, values)))
    return (replace_findings(text, findings)[0] if findings else text), findings


def _seen_by_a_reader(text: str, masked: tuple[str, ...]) -> Iterator[SecretFinding]:
    """The secrets of ``text`` as a reader sees it, placed back in ``text``."""
    view = reader_view(text)
    for found in find_secrets(view.text, masked):
        if found.end > found.start:
            start, end = view.source_span(found.start, found.end)
            yield SecretFinding(kind=found.kind, start=start, end=end)


def _merged_findings(
    first: list[SecretFinding], second: list[SecretFinding]
) -> list[SecretFinding]:
    """Both lists as one without overlaps (an overlap becomes one finding covering both)."""
    merged: list[SecretFinding] = []
    for finding in sorted([*first, *second], key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = SecretFinding(
                kind=last.kind, start=last.start, end=max(last.end, finding.end)
            )
        else:
            merged.append(finding)
    return merged


def replace_findings(text: str, findings: Sequence[SecretFinding]) -> tuple[str, list[int]]:
    """``text`` with each finding replaced by ``[REDACTED <kind>]``, and where each mark starts."""
    parts: list[str] = []
    marks: list[int] = []
    length = position = 0
    for finding in findings:
        kept = text[position : finding.start]
        mark = f"[REDACTED {finding.kind}]"
        marks.append(length + len(kept))
        parts += [kept, mark]
        length += len(kept) + len(mark)
        position = finding.end
    parts.append(text[position:])
    return "".join(parts), marks


def describe(findings: Iterable[SecretFinding | str]) -> str:
    """The kinds found, for people: ``"a GitHub token and an AWS access key id"``."""
    kinds = dict.fromkeys(f if isinstance(f, str) else f.kind for f in findings)
    named = [f"{_article(kind)} {kind}" for kind in kinds]
    if not named:
        return "no secrets"
    if len(named) == 1:
        return named[0]
    return ", ".join(named[:-1]) + " and " + named[-1]


# --- refusals: what the edit tools turned down, for the job summary -----------------------------


@dataclass(frozen=True, kw_only=True)
class MemoryRefusal:
    """One memory edit refused because it held secrets: which tool, what kinds, when."""

    tool: str
    kinds: tuple[str, ...]
    at: datetime


def _utc_now() -> datetime:
    return datetime.now(UTC)


class RefusalLog:
    """Memory edits refused for holding secrets; safe to report (kinds only, never values)."""

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        self._entries: list[MemoryRefusal] = []
        self._lock = threading.Lock()  # tool calls may run in parallel threads

    def record(self, tool: str, findings: Sequence[SecretFinding]) -> MemoryRefusal:
        kinds = tuple(dict.fromkeys(finding.kind for finding in findings))
        refusal = MemoryRefusal(tool=tool, kinds=kinds, at=self._clock())
        with self._lock:
            self._entries.append(refusal)
        return refusal

    @property
    def entries(self) -> tuple[MemoryRefusal, ...]:
        with self._lock:
            return tuple(self._entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[MemoryRefusal]:
        return iter(self.entries)

    def summary(self) -> str:
        """``"1 memory edit refused: it contained a GitHub token"``; empty when none was."""
        entries = self.entries
        if not entries:
            return ""
        kinds = [kind for entry in entries for kind in entry.kinds]
        if len(entries) == 1:
            return f"1 memory edit refused: it contained {describe(kinds)}"
        return f"{len(entries)} memory edits refused: they contained {describe(kinds)}"


# --- merging --------------------------------------------------------------------------------------


def _merge(candidates: list[Candidate]) -> list[SecretFinding]:
    """Overlapping candidates become one finding covering them all, named by the most specific."""
    findings: list[SecretFinding] = []
    current: Candidate | None = None
    for candidate in sorted(candidates, key=lambda c: (c.start, -c.end, c.priority)):
        if current is not None and candidate.start < current.end:
            winner = candidate if candidate.priority < current.priority else current
            current = Candidate(
                start=current.start,
                end=max(current.end, candidate.end),
                priority=winner.priority,
                kind=winner.kind,
            )
            continue
        if current is not None:
            findings.append(SecretFinding(kind=current.kind, start=current.start, end=current.end))
        current = candidate
    if current is not None:
        findings.append(SecretFinding(kind=current.kind, start=current.start, end=current.end))
    return findings


_VOWEL_SOUNDING = ("npm ", "API ", "SAS ")  # said "an": an npm token, an API key


def _article(kind: str) -> str:
    return "an" if kind[:1].lower() in "aeiou" or kind.startswith(_VOWEL_SOUNDING) else "a"
