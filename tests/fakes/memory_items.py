"""Generated memory: lessons as a review bot writes them, with near-duplicates of every kind.

``lessons`` writes items from a vocabulary drawn with Zipf's law (a few words in most items,
most words in few, as in prose), many citing a path or a symbol in a code span; ``variants``
rewrites some of them the ways the same lesson comes back: a word swapped, dropped or added,
a typo, a plural, another bullet, other case, a full stop. ``memory_of`` makes an AGENTS.md of
about a given size from both. Seeded: the same arguments give the same text.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "for",
    "use",
    "with",
    "on",
    "not",
    "be",
    "by",
    "when",
    "it",
    "that",
    "from",
    "are",
    "every",
    "as",
    "or",
    "never",
    "run",
    "test",
    "tests",
    "file",
    "files",
    "should",
    "before",
    "after",
    "each",
    "call",
    "calls",
    "return",
    "returns",
    "value",
    "values",
    "error",
    "errors",
    "request",
    "requests",
    "memory",
    "cache",
    "key",
    "keys",
    "config",
    "settings",
    "review",
    "pull",
    "branch",
    "commit",
    "merge",
    "save",
    "saved",
    "restore",
    "job",
    "workflow",
    "action",
    "step",
    "steps",
    "input",
    "inputs",
    "output",
    "outputs",
    "token",
    "tokens",
    "model",
    "models",
    "prompt",
    "answer",
    "retry",
    "retries",
    "timeout",
    "limit",
    "limits",
    "client",
    "server",
    "fake",
    "fixture",
    "fixtures",
    "module",
    "modules",
    "function",
    "functions",
    "class",
    "method",
    "methods",
    "name",
    "names",
    "path",
    "paths",
    "folder",
    "log",
    "logs",
    "line",
    "lines",
    "comment",
    "comments",
    "summary",
    "diff",
    "patch",
    "patches",
    "string",
    "bytes",
    "list",
    "dict",
    "parse",
    "parser",
    "parsed",
    "check",
    "checks",
    "guard",
    "guards",
    "rule",
    "rules",
    "keep",
    "kept",
    "only",
    "always",
    "first",
    "last",
    "new",
    "old",
    "same",
    "other",
    "own",
    "default",
    "explicit",
    "typed",
    "strict",
    "lazy",
    "small",
    "large",
    "fast",
    "slow",
    "safe",
    "unsafe",
    "public",
    "private",
    "local",
    "remote",
    "shared",
    "read",
    "write",
    "delete",
    "add",
    "remove",
    "rename",
    "move",
    "build",
    "import",
    "imports",
    "export",
    "type",
    "types",
    "schema",
    "field",
    "fields",
    "record",
    "records",
    "event",
    "events",
    "state",
    "handler",
    "handlers",
    "queue",
    "worker",
    "thread",
    "lock",
    "loop",
    "batch",
    "batches",
    "page",
    "pages",
    "item",
    "items",
    "entry",
    "entries",
    "scope",
    "layer",
    "overlay",
    "base",
    "head",
    "ref",
    "refs",
    "sha",
    "digest",
    "secret",
    "secrets",
    "mask",
    "masked",
    "redact",
    "scrub",
    "user",
    "users",
    "owner",
    "team",
    "maintainer",
    "reviewer",
    "author",
    "release",
    "version",
    "tag",
    "tags",
    "pin",
    "pinned",
    "docs",
    "readme",
    "changelog",
    "migration",
    "database",
    "query",
    "index",
    "upload",
    "download",
    "archive",
    "blob",
    "chunk",
    "size",
    "budget",
    "window",
    "wrapper",
    "helper",
    "util",
    "utils",
]
PATHS = [
    "src/app.py",
    "src/fetch.py",
    "src/settings.py",
    "src/cache/store.py",
    "src/cache/keys.py",
    "src/review/engine.py",
    "src/review/batches.py",
    "tests/conftest.py",
    "tests/fakes/server.py",
    "docs/usage.md",
    "README.md",
    "pyproject.toml",
    ".github/workflows/ci.yml",
]
SYMBOLS = [
    "fetch_retry",
    "parse_settings",
    "CacheStore.save",
    "restore_keys",
    "ReviewEngine",
    "plan_batches",
    "make_client",
    "load_config",
    "redact()",
    "run_job",
    "handle_event",
    "build_prompt",
]
BULLETS = ("- ", "* ", "+ ", "1. ", "- [ ] ")
TERMS = 6_000  # a repository's own words (its modules, its domain): the long tail
_SYLLABLES = [
    "ba",
    "be",
    "ci",
    "do",
    "fu",
    "ga",
    "ke",
    "li",
    "mo",
    "nu",
    "pa",
    "re",
    "si",
    "to",
    "vu",
    "za",
    "ch",
    "st",
    "tr",
    "pl",
    "gr",
    "on",
    "er",
    "in",
    "al",
]


def vocabulary(seed: int) -> list[str]:
    """``WORDS`` first, then ``TERMS`` made-up words of two to four syllables: ranked for Zipf."""
    rng = random.Random(seed)  # noqa: S311 - test data
    terms: dict[str, None] = {}
    while len(terms) < TERMS:
        terms["".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))] = None
    return [*WORDS, *(term for term in terms if term not in WORDS)]


def lessons(count: int, seed: int) -> list[str]:
    """``count`` distinct lessons, one line each, without the bullet."""
    rng = random.Random(seed)  # noqa: S311 - test data
    ranked = vocabulary(seed)
    weights = [1 / rank for rank in range(1, len(ranked) + 1)]
    made: dict[str, None] = {}
    while len(made) < count:
        words = rng.choices(ranked, weights, k=rng.randint(5, 22))
        words[0] = words[0].capitalize()
        if rng.random() < 0.5:
            cited = rng.choice(PATHS) if rng.random() < 0.6 else rng.choice(SYMBOLS)
            words.insert(rng.randrange(1, len(words) + 1), f"`{cited}`")
        made[" ".join(words) + rng.choice((".", ".", "", ";", "!"))] = None
    return list(made)


def variant(text: str, rng: random.Random, edits: int) -> str:
    """``text`` changed the ways a lesson comes back, ``edits`` times."""
    words = text.split()
    for _ in range(edits):
        where = rng.randrange(len(words))
        kind = rng.random()
        if kind < 0.2:
            words[where] = rng.choice(WORDS)
        elif kind < 0.35 and len(words) > 3:
            del words[where]
        elif kind < 0.5:
            words.insert(where, rng.choice(WORDS))
        elif kind < 0.7:
            words[where] = _typo(words[where], rng)
        elif kind < 0.8:
            words[where] = (
                words[where] + "s" if not words[where].endswith("s") else words[where][:-1]
            )
        elif kind < 0.9:
            words[where] = words[where].upper() if rng.random() < 0.5 else words[where].lower()
        else:
            words[-1] = words[-1].rstrip(".;!") + rng.choice((".", "", "!"))
    return " ".join(words)


def variants(texts: Sequence[str], share: float, seed: int) -> list[str]:
    """Near-copies of a ``share`` of ``texts``, each with 1 to a quarter of its words edited;
    some are variants of variants."""
    rng = random.Random(seed)  # noqa: S311 - test data
    made: list[str] = []
    for _ in range(int(len(texts) * share)):
        source = rng.choice([*texts, *made]) if made and rng.random() < 0.2 else rng.choice(texts)
        made.append(variant(source, rng, rng.randint(1, max(1, len(source.split()) // 4))))
    return made


def memory_of(size_bytes: int, seed: int, share: float = 0.03) -> str:
    """An AGENTS.md of at most ``size_bytes``: headings every 40 items, lessons as list items,
    ``share`` of them near-duplicates of others."""
    rng = random.Random(seed)  # noqa: S311 - test data
    texts = lessons(max(4, size_bytes // 50), seed)
    texts += variants(texts, share, seed + 1)
    rng.shuffle(texts)
    lines, size = ["# Memory"], len("# Memory\n")
    for number, text in enumerate(texts):
        heading = [f"## Part {number // 40 + 1}"] if number % 40 == 39 else []
        added = [*heading, rng.choice(BULLETS) + text]
        more = sum(len(line.encode()) + 1 for line in added)
        if size + more > size_bytes:
            break
        lines += added
        size += more
    return "\n".join(lines) + "\n"


def _typo(word: str, rng: random.Random) -> str:
    where = rng.randrange(len(word))
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    kind = rng.randrange(3)
    if kind == 0 and len(word) > 1:
        return word[:where] + word[where + 1 :]
    if kind == 1:
        return word[:where] + letter + word[where + 1 :]
    return word[:where] + letter + word[where:]
