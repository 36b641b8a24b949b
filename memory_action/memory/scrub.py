"""Finding secrets in memory text, and redacting them: pure functions, no I/O.

``find_secrets`` looks for well-known token formats (GitHub, AWS, OpenAI, Anthropic, Slack, ...),
private-key blocks, JWTs, credentials in URLs, high-entropy values assigned to credential-like
names, and every value the run masked (also URL-encoded and base64-encoded, at any alignment inside
a larger base64 string). Findings never carry the secret itself: only its kind and where it is, so
they can be logged, counted and reported.

Each detector is anchored on a literal (a prefix, a keyword, ``://``) and every quantifier is
bounded or linear, so a MiB of memory is scanned in well under a second.
"""

from __future__ import annotations

import base64
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, quote_plus

# The kinds below are names of secrets, not secrets (S105 would flag GITHUB_TOKEN = "...").
# ruff: noqa: S105

# --- kinds --------------------------------------------------------------------------------------

GITHUB_TOKEN = "GitHub token"
AWS_ACCESS_KEY_ID = "AWS access key id"
AWS_SECRET_ACCESS_KEY = "AWS secret access key"
OPENAI_API_KEY = "OpenAI API key"
ANTHROPIC_API_KEY = "Anthropic API key"
SLACK_TOKEN = "Slack token"
SLACK_WEBHOOK = "Slack webhook URL"
GITLAB_TOKEN = "GitLab token"
NPM_TOKEN = "npm token"
PYPI_TOKEN = "PyPI token"
GOOGLE_API_KEY = "Google API key"
STRIPE_KEY = "Stripe secret key"
HUGGING_FACE_TOKEN = "Hugging Face token"
PRIVATE_KEY = "private key"
JWT = "JWT"
MASKED_VALUE = "masked secret"
URL_PASSWORD = "password in a URL"
CREDENTIAL = "hard-coded credential"

_ARTICLES = {AWS_ACCESS_KEY_ID: "an", AWS_SECRET_ACCESS_KEY: "an", OPENAI_API_KEY: "an"}
_ARTICLES |= {ANTHROPIC_API_KEY: "an", NPM_TOKEN: "an"}

# Lower wins when findings overlap: the most specific name is the most useful to a reader.
_PRIORITY = {PRIVATE_KEY: 0, JWT: 2, MASKED_VALUE: 3, URL_PASSWORD: 4, CREDENTIAL: 5}
_SPECIFIC_PRIORITY = 1

MIN_MASKED_LENGTH = 4  # what ``Workflow.add_mask`` keeps, too
_MIN_ENCODED_LENGTH = 8  # an encoded form shorter than this would match by chance
MIN_CREDENTIAL_LENGTH = 16
MIN_CREDENTIAL_ENTROPY = 3.5  # bits per character
MIN_HEX_CREDENTIAL_ENTROPY = 3.0  # for a hex value of 20 characters or more
_MIN_URL_PASSWORD_LENGTH = 8
_MIN_URL_PASSWORD_ENTROPY = 3.0


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret of ``kind`` at ``text[start:end]``; the value itself is never kept."""

    kind: str
    start: int
    end: int


def find_secrets(text: str, masked: Iterable[str] = ()) -> list[SecretFinding]:
    """Every secret in ``text``: non-overlapping (overlaps are merged), sorted by position."""
    candidates: list[_Candidate] = []
    for detector in _DETECTORS:
        candidates.extend(detector(text))
    candidates.extend(_masked_candidates(text, masked))
    return _merge(candidates)


def redact(text: str, masked: Iterable[str] = ()) -> tuple[str, list[SecretFinding]]:
    """``text`` with each secret replaced by ``[REDACTED <kind>]``, and what was replaced."""
    findings = find_secrets(text, masked)
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts.append(text[position : finding.start])
        parts.append(f"[REDACTED {finding.kind}]")
        position = finding.end
    parts.append(text[position:])
    return "".join(parts), findings


def describe(findings: Iterable[SecretFinding | str]) -> str:
    """The kinds found, for people: ``"a GitHub token and an AWS access key id"``."""
    kinds = dict.fromkeys(f if isinstance(f, str) else f.kind for f in findings)
    named = [f"{_article(kind)} {kind}" for kind in kinds]
    if not named:
        return "no secrets"
    if len(named) == 1:
        return named[0]
    return ", ".join(named[:-1]) + " and " + named[-1]


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for an empty string)."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


# --- refusals: what the edit tools turned down, for the job summary -----------------------------


@dataclass(frozen=True)
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


# --- detectors ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    priority: int
    kind: str


_Detector = Callable[[str], Iterator[_Candidate]]

_NOT_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"


@dataclass(frozen=True)
class _TokenFormat:
    kind: str
    marker: str  # a literal that every match contains: a cheap pre-check
    pattern: re.Pattern[str]
    body_group: int = 0  # the part that must not be a placeholder like ghp_xxxx...


_TOKEN_FORMATS = (
    _TokenFormat(
        GITHUB_TOKEN,
        "gh",
        re.compile(_NOT_ALNUM_BEFORE + r"gh[pousr]_([A-Za-z0-9]{36,255})"),
        body_group=1,
    ),
    _TokenFormat(
        GITHUB_TOKEN,
        "github_pat_",
        re.compile(_NOT_ALNUM_BEFORE + r"github_pat_([A-Za-z0-9_]{30,255})"),
        body_group=1,
    ),
    _TokenFormat(
        AWS_ACCESS_KEY_ID,
        "A",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)([A-Z0-9]{16})(?![A-Za-z0-9])"),
        body_group=1,
    ),
    _TokenFormat(
        ANTHROPIC_API_KEY,
        "sk-ant-",
        re.compile(_NOT_ALNUM_BEFORE + r"sk-ant-[a-z]{2,10}\d{2}-([A-Za-z0-9_-]{32,255})"),
        body_group=1,
    ),
    _TokenFormat(
        OPENAI_API_KEY,
        "sk-",
        re.compile(_NOT_ALNUM_BEFORE + r"sk-(?:proj|svcacct|admin|None)-([A-Za-z0-9_-]{32,255})"),
        body_group=1,
    ),
    _TokenFormat(
        OPENAI_API_KEY,
        "sk-",
        re.compile(_NOT_ALNUM_BEFORE + r"sk-([A-Za-z0-9]{40,64})(?![A-Za-z0-9_-])"),
        body_group=1,
    ),
    _TokenFormat(
        SLACK_TOKEN,
        "x",
        re.compile(
            _NOT_ALNUM_BEFORE + r"(?:xox[abprse](?:\.xox[bp])?|xapp)-((?=[A-Za-z0-9-]*\d)"
            r"[A-Za-z0-9-]{10,255})"
        ),
        body_group=1,
    ),
    _TokenFormat(
        SLACK_WEBHOOK,
        "hooks.slack.com",
        re.compile(
            r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"([A-Za-z0-9_/+-]{16,255})"
        ),
        body_group=1,
    ),
    _TokenFormat(
        GITLAB_TOKEN,
        "gl",
        re.compile(_NOT_ALNUM_BEFORE + r"gl(?:pat|ptt|dt|rt|soat)-([A-Za-z0-9_-]{20,255})"),
        body_group=1,
    ),
    _TokenFormat(
        NPM_TOKEN,
        "npm_",
        re.compile(_NOT_ALNUM_BEFORE + r"npm_([A-Za-z0-9]{36,255})"),
        body_group=1,
    ),
    _TokenFormat(
        PYPI_TOKEN,
        "pypi-AgE",
        re.compile(_NOT_ALNUM_BEFORE + r"pypi-AgE([A-Za-z0-9_-]{50,1000})"),
        body_group=1,
    ),
    _TokenFormat(
        GOOGLE_API_KEY,
        "AIza",
        re.compile(_NOT_ALNUM_BEFORE + r"AIza([A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])"),
        body_group=1,
    ),
    _TokenFormat(
        STRIPE_KEY,
        "k_",
        re.compile(_NOT_ALNUM_BEFORE + r"[sr]k_(?:live|test)_([A-Za-z0-9]{20,255})"),
        body_group=1,
    ),
    _TokenFormat(
        HUGGING_FACE_TOKEN,
        "hf_",
        re.compile(_NOT_ALNUM_BEFORE + r"hf_([A-Za-z]{34})(?![A-Za-z0-9])"),
        body_group=1,
    ),
)


def _token_candidates(text: str) -> Iterator[_Candidate]:
    for token in _TOKEN_FORMATS:
        if token.marker not in text:
            continue
        for match in token.pattern.finditer(text):
            body = match.group(token.body_group)
            if len(set(body)) < 3 or "EXAMPLE" in body:  # ghp_xxxx..., AKIAIOSFODNN7EXAMPLE
                continue
            yield _Candidate(match.start(), match.end(), _SPECIFIC_PRIORITY, token.kind)


_KEY_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_KEY_BEGIN = re.compile(r"-----BEGIN " + _KEY_LABEL)
_KEY_END = re.compile(r"-----END " + _KEY_LABEL)


def _private_key_candidates(text: str) -> Iterator[_Candidate]:
    """Whole ``-----BEGIN ... PRIVATE KEY-----`` blocks; without an END, to the end of text."""
    if "PRIVATE KEY" not in text:
        return
    position = 0
    while (begin := _KEY_BEGIN.search(text, position)) is not None:
        end = _KEY_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        yield _Candidate(begin.start(), stop, _PRIORITY[PRIVATE_KEY], PRIVATE_KEY)
        position = stop


_JWT = re.compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"
    r"(?:\.[A-Za-z0-9_-]+)*"
)


def _jwt_candidates(text: str) -> Iterator[_Candidate]:
    if "eyJ" not in text:
        return
    for match in _JWT.finditer(text):
        yield _Candidate(match.start(), match.end(), _PRIORITY[JWT], JWT)


_AWS_SECRET = re.compile(
    r"(?i)(?:aws[_-]?)?secret[_-]?access[_-]?key[\"']?[ \t]{0,8}(?:=|:=|:|=>)[ \t]{0,8}[\"']?"
    r"(?P<value>(?-i:[A-Za-z0-9/+]{40}))(?![A-Za-z0-9/+=])"
)


def _aws_secret_candidates(text: str) -> Iterator[_Candidate]:
    if "ccess" not in text.lower():  # access / Access / ACCESS
        return
    for match in _AWS_SECRET.finditer(text):
        value = match.group("value")
        if "EXAMPLE" in value or _is_placeholder(value):
            continue
        start, end = match.span("value")
        yield _Candidate(start, end, _SPECIFIC_PRIORITY, AWS_SECRET_ACCESS_KEY)


_URL_CREDENTIALS = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s:/@\"'<>]{0,128}:(?P<password>[^\s/@\"'<>]{1,256})@"
    r"(?=[A-Za-z0-9\[])"
)


def _url_password_candidates(text: str) -> Iterator[_Candidate]:
    if "://" not in text:
        return
    for match in _URL_CREDENTIALS.finditer(text):
        password = match.group("password")
        if (
            len(password) < _MIN_URL_PASSWORD_LENGTH
            or _is_placeholder(password)
            or shannon_entropy(password) < _MIN_URL_PASSWORD_ENTROPY
        ):
            continue
        start, end = match.span("password")
        yield _Candidate(start, end, _PRIORITY[URL_PASSWORD], URL_PASSWORD)


# A credential-like name (also at the end of a longer one: GITHUB_TOKEN, dbPassword, x-api-key),
# an assignment (=, :, :=, =>, " is "), then a quoted or bare value.
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|auth(?:orization)?|credentials?|private[_-]?key)"
    r"(?P<suffix>[_.-][A-Za-z0-9_.-]{0,40})?"
    r"[\"']?(?:[ \t]{0,8}(?:=|:=|:|=>)|[ \t]+is)[ \t]{0,8}"
    r"(?:(?:bearer|basic|token)[ \t]+)?"
    r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'"
    r"|(?P<bare>[^\s\"'`,;&<>()\[\]{}]{1,512}))"
)
# Names that talk about a credential without holding one: secret_name, token_url, api_key_env...
_DESCRIPTIVE_SUFFIX = re.compile(
    r"(?i)[_.-](?:names?|types?|file|path|ur[il]s?|endpoint|env|vars?|ref|ids?|count|len(?:gth)?"
    r"|ttl|expir(?:y|es|ation)|header|field|limit|mode|kind|format|size|prefix|scopes?"
    r"|permissions|provider|usage|rotation|policy|store|source|hash|digest)(?=$|[_.-])"
)


def _assignment_candidates(text: str) -> Iterator[_Candidate]:
    for match in _ASSIGNMENT.finditer(text):
        if _DESCRIPTIVE_SUFFIX.search(match.group("suffix") or "") is not None:
            continue
        group = next(name for name in ("dq", "sq", "bare") if match.group(name) is not None)
        start, end = match.span(group)
        if group == "bare":  # a sentence's full stop is not part of the value
            while end > start and text[end - 1] in ".:!?":
                end -= 1
        if _looks_like_credential(text[start:end]):
            yield _Candidate(start, end, _PRIORITY[CREDENTIAL], CREDENTIAL)


_PLACEHOLDER = re.compile(
    r"(?i)xxxx|\*\*\*|\.\.\.|<[^>]*>|\$\{|\{\{|\}\}|%\(|^\$|^%|%$|your[_-]?|example|placeholder"
    r"|changeme|change[_-]me|redacted|dummy|sample|insert[_-]|replace[_-]?me|^secrets?\.|env\."
    r"|vars\."
)
# Words, names and paths: snake_case, kebab-case, CONSTANT_CASE, Capitalised, a:urn, a/path.
_WORDS = re.compile(
    r"_*(?:[A-Za-z][a-z]*[0-9]*(?:[-_.:/]+[A-Za-z0-9][a-z0-9]*)*|[A-Z]+(?:[-_.:/]+[A-Z0-9]+)*)_*"
)
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_MIN_CAMEL_PART = 3.0  # average characters per part: "SSHPrivateKeyTypes" is 4.5, random ~2
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)
_HEX_VALUE = re.compile(r"[0-9a-f]{20,}|[0-9A-F]{20,}")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")


def _is_placeholder(value: str) -> bool:
    return len(set(value)) <= 3 or _PLACEHOLDER.search(value) is not None


def _looks_like_credential(value: str) -> bool:
    """A value that is long, random-looking and not a placeholder, a word, a name or a path."""
    return (
        len(value) >= MIN_CREDENTIAL_LENGTH
        and not any(c.isspace() for c in value)
        and "://" not in value
        and not value.startswith(("/", "./", "../", "~/"))
        and not _is_placeholder(value)
        and _WORDS.fullmatch(value) is None
        and not _is_camel_case(value)
        and _DOTTED_NAME.fullmatch(value) is None
        and not value.isdigit()
        and shannon_entropy(value) >= _entropy_floor(value)
    )


def _is_camel_case(value: str) -> bool:
    """A name like ``IAmSensitiveBytes`` or ``Ed25519PrivateKey``: long parts that are words.

    Random letters and digits make many short parts, and lower-case runs without vowels.
    """
    name = value.strip("_")
    if not name.isalnum() or not name.isascii():
        return False
    parts = _CAMEL_PART.findall(name)
    if len(name) < _MIN_CAMEL_PART * len(parts):
        return False
    words = (part for part in parts if len(part) >= 3 and part.isalpha() and not part.isupper())
    return all(_VOWEL.search(word) for word in words)


def _entropy_floor(value: str) -> float:
    """``MIN_CREDENTIAL_ENTROPY``, relaxed where a random value cannot reach it.

    A value of n characters has at most log2(n) bits per character, so a random 16-character
    token is often just under 3.5: 80% of that ceiling is enough. Hex has at most 4 bits per
    character and random hex of 20-40 characters mostly lands between 3.0 and 3.7.
    """
    floor = min(MIN_CREDENTIAL_ENTROPY, 0.8 * math.log2(len(value)))
    if _HEX_VALUE.fullmatch(value) is not None:
        floor = min(floor, MIN_HEX_CREDENTIAL_ENTROPY)
    return floor


_DETECTORS: tuple[_Detector, ...] = (
    _private_key_candidates,
    _token_candidates,
    _aws_secret_candidates,
    _jwt_candidates,
    _url_password_candidates,
    _assignment_candidates,
)


# --- masked values ------------------------------------------------------------------------------

_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
_TO_URLSAFE = str.maketrans("+/", "-_")
_PERCENT_HEX = re.compile(r"%[0-9A-F]{2}")


def masked_forms(value: str) -> tuple[list[str], list[str]]:
    """The forms a masked value can leak in: (plain and URL-encoded forms, base64 cores).

    A base64 core is the part of the value's encoding that does not depend on its neighbours,
    for each of the three byte alignments, in the standard and the URL-safe alphabets: so the
    value is found inside a larger encoded string too (``base64("x-access-token:" + token)``).
    """
    plain = [value]
    for encoded in (quote(value, safe=""), quote_plus(value, safe="")):
        lower_hex = _PERCENT_HEX.sub(lambda m: m.group(0).lower(), encoded)
        plain.extend(form for form in (encoded, lower_hex) if form not in plain)
    raw = value.encode("utf-8")
    cores: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
        if len(core) < _MIN_ENCODED_LENGTH:
            continue
        cores.extend(form for form in (core, core.translate(_TO_URLSAFE)) if form not in cores)
    return plain, cores


def _masked_candidates(text: str, masked: Iterable[str]) -> Iterator[_Candidate]:
    priority = _PRIORITY[MASKED_VALUE]
    for value in _usable_masked(masked):
        plain, cores = masked_forms(value)
        for form in plain:
            for start, end in _occurrences(text, form):
                yield _Candidate(start, end, priority, MASKED_VALUE)
        for core in cores:
            yield from _encoded_runs(text, core, priority)


def _encoded_runs(text: str, core: str, priority: int) -> Iterator[_Candidate]:
    """Each whole base64 run holding ``core``: its edges hold bits of the value too."""
    start = text.find(core)
    while start != -1:
        lo, hi = start, start + len(core)
        while lo > 0 and text[lo - 1] in _BASE64_CHARS:
            lo -= 1
        while hi < len(text) and text[hi] in _BASE64_CHARS:
            hi += 1
        yield _Candidate(lo, hi, priority, MASKED_VALUE)
        start = text.find(core, hi)


def _usable_masked(masked: Iterable[str]) -> list[str]:
    values: set[str] = set()
    for value in masked:
        for line in {value, *value.splitlines()}:
            part = line.strip()
            if len(part) >= MIN_MASKED_LENGTH:
                values.add(part)
    return sorted(values, key=lambda v: (-len(v), v))


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


# --- merging --------------------------------------------------------------------------------------


def _merge(candidates: list[_Candidate]) -> list[SecretFinding]:
    """Overlapping candidates become one finding covering them all, named by the most specific."""
    findings: list[SecretFinding] = []
    current: _Candidate | None = None
    for candidate in sorted(candidates, key=lambda c: (c.start, -c.end, c.priority)):
        if current is not None and candidate.start < current.end:
            winner = candidate if candidate.priority < current.priority else current
            current = _Candidate(
                current.start, max(current.end, candidate.end), winner.priority, winner.kind
            )
            continue
        if current is not None:
            findings.append(SecretFinding(current.kind, current.start, current.end))
        current = candidate
    if current is not None:
        findings.append(SecretFinding(current.kind, current.start, current.end))
    return findings


def _article(kind: str) -> str:
    return _ARTICLES.get(kind, "an" if kind[:1].lower() in "aeiou" else "a")
