"""What the scrubber catches, layer by layer, and how fast it stays on hostile input.

    .venv/bin/python bench/scrubber.py

Prints, for the independent corpus in ``tests/fixtures/secrets/`` (see ``tests/fakes/
secrets_corpus.py``): secrets caught / total, masked leaks caught / total, benign lines flagged
/ total and memory-style lines flagged / total (target: at most 1 in 10,000), for the format
rules alone, then with the context rules, then with the run's masked values; and the same for
``detect-secrets``' format plugins (its high-entropy and keyword detectors left out) when it is
installed, alone and added to ours. Then the CPU time to scan 1 MiB of each kind of adversarial
text, against 1 MiB of ordinary memory lines measured in the same run (it must stay linear),
and nine checks of a 1 MiB memory (what a run makes) without and with ``scan_once``. Last, the
rendered forms (``tests/fakes/rendered_forms.py``: escapes, references, emphasis, invisible
characters, full-width) of a few token families and a masked value, planted in prose and in code,
and how many the outgoing gate redacts; and the reader's view's cost on 1 MiB of Markdown, against
the plain scan of the same text in the same run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_action.safety.outgoing import Form, gate  # noqa: E402
from memory_action.safety.reader_view import reader_view  # noqa: E402
from memory_action.safety.scrub import (  # noqa: E402
    ALL_LAYERS,
    Layer,
    find_secrets,
    redact,
    replace_findings,
    scan_once,
)
from tests.fakes.rendered_forms import as_seen, rendered_forms  # noqa: E402
from tests.fakes.secrets_corpus import (  # noqa: E402
    BENIGN,
    MASKED_LEAKS,
    MASKED_VALUES,
    MAX_FLAGGED_PER_LINE,
    MEMORY_TEXT,
    PLANTED,
    Planted,
    is_caught,
)

MIB = 2**20
_Redactor = Callable[[str], str]


def ours(layers: frozenset[Layer]) -> _Redactor:
    def redact(text: str) -> str:
        return replace_findings(text, find_secrets(text, MASKED_VALUES, layers=layers))[0]

    return redact


def library() -> _Redactor | None:
    """detect-secrets' format plugins (no entropy, no keyword detector), or None."""
    try:
        from detect_secrets.core.scan import scan_line  # noqa: PLC0415
        from detect_secrets.settings import default_settings  # noqa: PLC0415
    except ImportError:
        return None

    def values(text: str) -> Iterator[str]:
        with default_settings() as settings:
            settings.disable_plugins(
                "Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector"
            )
            for line in text.splitlines():
                for found in scan_line(line):
                    if found.secret_value:
                        yield found.secret_value

    def redact(text: str) -> str:
        for value in sorted(set(values(text)), key=len, reverse=True):
            text = text.replace(value, "[R]")
        return text

    return redact


def both(first: _Redactor, second: _Redactor) -> _Redactor:
    return lambda text: second(first(text))


def figures(name: str, redact: _Redactor) -> None:
    secrets = sum(is_caught(redact, planted) for planted in PLANTED)
    masked = sum(is_caught(redact, leak) for leak in MASKED_LEAKS)
    flagged = [line for line in BENIGN if redact(line) != line]
    memory = [line for line in MEMORY_TEXT if redact(line) != line]
    print(
        f"{name:<34} secrets {secrets:>3}/{len(PLANTED)}   masked {masked:>2}/{len(MASKED_LEAKS)}"
        f"   benign flagged {len(flagged)}/{len(BENIGN)}"
        f"   memory text flagged {len(memory)}/{len(MEMORY_TEXT)}"
        f" ({len(memory) / len(MEMORY_TEXT) * 10_000:.1f} per 10,000)"
    )
    for line in (flagged + memory)[:5]:
        print(f"{'':<36}flagged: {line[:90]}")


def missed_by(redact: _Redactor) -> list[Planted]:
    return [planted for planted in PLANTED if not is_caught(redact, planted)]


HOSTILE: dict[str, str] = {
    "ordinary memory lines": "- Fixed in 3f786850e387550fdab836ed7e6dc881de23001b; rotate.\n",
    "token= repeated": "token=",
    "password: repeated": "password: ",
    "one long identifier with key": "key",
    "eyJ then letters": "eyJ" + "a" * 1000,
    "scheme://user: repeated": "https://u:",
    "BEGIN PRIVATE KEY lines": "-----BEGIN RSA PRIVATE KEY-----\n",
    "base64 run": "QUFBQUFB",
    "one letter": "a",
    "hex run": "0123456789abcdef",
    "digits and colons": "1234567890:",
    "curl -u repeated": "curl -u a:b ",
    "-p repeated after mysql": "mysql -pXyz12345 ",
    "dotted names": "abcdefghijklmnopqrstuvwxyz0123.",
    "xml tags": "<password>x</password>",
    "line breaks": "ab\n",
    "backslash line breaks": "ab\\\n",
    "quoted line breaks": '"ab" +\n  "',
    "escaped line breaks": "ab\\n",
    "shell defaults": "${DB_PASSWORD:-",
    "a word before a name": "the public key ",
    "v1.0- and hex": "v1.0-0123456789abcdef-",
    "scheme://user@ repeated": "https://abcdefgh1234@",
    ".pgpass-like fields": "db:5432:app:ci:",
    "?code= repeated": "/api/f?code=",
    "&code= keys in one URL": "&code=Ab1Cd2Ef3Gh4Ij5Kl6Mn7",
    "curl -b cookies": "curl -b 'session=Ab1;",
    "a long Cookie: header": "Cookie: " + "a" * 5000 + "\n",
    "appSettings add key": '<add key="Secret" value="',
    # The masked layer's views: decoded octets and escapes, a dump's gaps, a value's pieces.
    "percent-encoded octets": "%41%",
    "\\u escapes": "\\u0041",
    "spaced hex bytes": "ab cd ",
    "hexdump lines": "00000000  6b 38 73 44  |k8sD|\n",
    "a masked value's piece, repeated": "k8sDeployKey-7",
    "list items": "- ab\n",
}


def cpu_seconds(action: Callable[[], object]) -> float:
    start = time.process_time()
    action()
    return time.process_time() - start


def mebibyte(unit: str) -> str:
    return (unit * (MIB // len(unit) + 1))[:MIB]


def timings() -> None:
    masked = [*MASKED_VALUES, "AAAAAA", "aaaa"]
    reference = 0.0  # the first kind, ordinary memory lines: what adversarial text costs more
    slowest = 0.0
    for name, unit in HOSTILE.items():
        text = mebibyte(unit)
        seconds = cpu_seconds(lambda: find_secrets(text, masked))  # noqa: B023 - called at once
        reference = reference or seconds
        slowest = max(slowest, seconds)
        print(f"1 MiB of {name:<30} {seconds:6.2f} s CPU   ({seconds / reference:4.1f} x ordinary)")
    print(f"slowest 1 MiB of adversarial text: {slowest:.2f} s CPU ({slowest / reference:.1f} x)")


def scanned_once_per_run(checks: int = 9) -> None:
    """A run checks its memory about nine times (restore, prompt, edits, save, publish)."""
    memory = mebibyte("\n".join(MEMORY_TEXT) + "\n")
    every_time = cpu_seconds(lambda: [find_secrets(memory, MASKED_VALUES) for _ in range(checks)])
    with scan_once():
        once = cpu_seconds(lambda: [find_secrets(memory, MASKED_VALUES) for _ in range(checks)])
    print(
        f"{checks} checks of a 1 MiB memory: {every_time:.2f} s CPU scanning each time,"
        f" {once:.2f} s with scan_once ({every_time / max(once, 1e-6):.1f} x less)"
    )


# Token families whose secrets hold punctuation (so every form applies), and a masked value.
FORM_FAMILIES = (
    "GitHub classic PAT",
    "GitLab personal access token",
    "Slack bot token",
    "npm token",
)
# A review's Markdown: headings, lists, emphasis, code spans and fences, links, a table,
# references, a quote; repeated to 1 MiB.
MARKDOWN = """## Review of `src/fetch.py`

- **Retry** the request _three_ times; see [the docs](https://example.com/retry#backoff).
- `get(url)` may raise &mdash; wrap it: \\`try\\` is not enough.
> Note: the token is read from `GITHUB_TOKEN`, never written.

| file | line | finding |
|---|---|---|
| src/fetch.py | 12 | ~~unused~~ import |

```python
for attempt in range(3):
    return get(url)  # &amp; no sleep
```

"""


def _survives(text: str, secret: str) -> bool:
    seen, wanted = as_seen(text), as_seen(secret)
    return any(wanted[i : i + 8] in seen for i in range(len(wanted) - 7))


def rendered_forms_caught() -> None:
    """Each form in prose, and each but emphasis (literal asterisks there) in a code span."""
    secrets = [next(p for p in PLANTED if p.family == f).secrets[0] for f in FORM_FAMILIES]
    planted = caught = 0
    for secret in [*secrets, MASKED_VALUES[1]]:
        for name, form in rendered_forms(secret).items():
            places = [f"see {form} here"]
            if "emphasis" not in name:
                places.append(f"see `{form}` here")
            for text in places:
                planted += 1
                caught += not _survives(gate(text, MASKED_VALUES, form=Form.MARKDOWN).text, secret)
    families = f"{len(secrets)} token families and a masked value"
    print(f"rendered forms ({families}, prose and code): planted {planted} / caught {caught}")


def reader_view_cost() -> None:
    """What reading 1 MiB of Markdown as GitHub shows it adds to the plain scan."""
    text = mebibyte(MARKDOWN)
    plain = cpu_seconds(lambda: find_secrets(text, MASKED_VALUES))
    view = cpu_seconds(lambda: reader_view(text))
    both = cpu_seconds(lambda: redact(text, MASKED_VALUES))
    print(
        f"1 MiB of Markdown: plain scan {plain:.2f} s CPU, reader's view {view:.2f} s"
        f" ({view / plain:.1f} x), redacted as written and as read {both:.2f} s"
        f" ({both / plain:.1f} x the plain scan)"
    )


def target_met() -> bool:
    memory = sum(bool(find_secrets(line, MASKED_VALUES)) for line in MEMORY_TEXT)
    return memory <= len(MEMORY_TEXT) * MAX_FLAGGED_PER_LINE


def main() -> None:
    formats = frozenset({Layer.FORMATS})
    figures("(a) formats", ours(formats))
    figures("(a)+(b) formats + context", ours(formats | {Layer.CONTEXT}))
    figures("(a)+(b)+(c) + masked values", ours(ALL_LAYERS))
    for planted in missed_by(ours(ALL_LAYERS)):
        print(f"  missed: {planted.family}")
    extra = library()
    if extra is None:
        print("detect-secrets is not installed: pip install detect-secrets to compare")
    else:
        figures("detect-secrets format plugins", extra)
        figures("(a)+(b)+(c) + detect-secrets", both(ours(ALL_LAYERS), extra))
    met = "met" if target_met() else "NOT met"
    print(f"memory text: at most 1 flagged line in 10,000: {met}")
    timings()
    scanned_once_per_run()
    rendered_forms_caught()
    reader_view_cost()


if __name__ == "__main__":
    main()
