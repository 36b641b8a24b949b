"""The secrets corpus: plain data files under ``tests/fixtures/secrets/``, read as they are.

The files are written from providers' documentation of their token formats, never from the
scrubber's patterns, and this module only reads them (it does not import the scrubber), so a
test over them measures the scrubber rather than its patterns matching themselves.

- ``PLANTED``: one secret per line of ``secrets.tsv``, with the documentation of its format.
- ``MASKED_VALUES`` and ``MASKED_LEAKS``: what a run masked, and texts leaking one encoded
  (``masked.tsv``; a leak's ``source`` is the value it leaks); found only when the masked values
  are passed to the scrubber.
- ``BENIGN``: lines a review bot writes that hold no secret (``benign.txt``).
- ``MEMORY_TEXT``: memory-style lines as AGENTS.md / CLAUDE.md / CONTRIBUTING.md / copilot
  instructions hold them, none a secret (``memory_text.txt``, written by
  ``write_memory_text.py``): commands with flags, "pass" as a verb, brand names, shell defaults,
  prose about credentials followed by a commit, a hash or a public key.

In the files, the secret inside a text is marked with ⟦ and ⟧, and a literal ``\\n`` is a line
break.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "secrets"
_MARKED = re.compile(r"⟦(.*?)⟧", re.DOTALL)


@dataclass(frozen=True)
class Planted:
    """``text`` holding ``secrets`` (each a substring of it); ``family`` names the format."""

    family: str
    source: str
    text: str
    secrets: tuple[str, ...]


def _lines(name: str) -> list[str]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _planted(family: str, source: str, marked: str) -> Planted:
    marked = marked.replace("\\n", "\n")
    secrets = tuple(_MARKED.findall(marked))
    if not secrets:
        raise ValueError(f"no secret marked in the {family!r} line")
    return Planted(family, source, _MARKED.sub(r"\1", marked), secrets)


def _load_planted() -> list[Planted]:
    planted = []
    for line in _lines("secrets.tsv"):
        family, source, marked = line.split("\t")
        planted.append(_planted(family, source, marked))
    return planted


def _load_masked() -> tuple[tuple[str, ...], list[Planted]]:
    values: list[str] = []
    leaks: list[Planted] = []
    for line in _lines("masked.tsv"):
        encoding, value, *text = line.split("\t")
        if encoding == "masked":
            values.append(value)
        else:  # a leak's source is the masked value it leaks
            leaks.append(_planted(encoding, value, *text))
    return tuple(values), leaks


PLANTED: list[Planted] = _load_planted()
MASKED_VALUES, MASKED_LEAKS = _load_masked()
BENIGN: list[str] = [line.replace("\\n", "\n") for line in _lines("benign.txt")]
MEMORY_TEXT: list[str] = _lines("memory_text.txt")
MAX_FLAGGED_PER_LINE = 1 / 10_000  # the target for real memory text (issue 17)


# --- measuring a scrubber on the corpus (used by the corpus tests and bench/scrubber.py) ---------

WINDOW = 8  # no run of this many characters of a secret may survive redaction


def survivors(redacted: str, planted: Planted) -> list[str]:
    """Runs of ``WINDOW`` characters of the planted secrets still in ``redacted``."""
    left = []
    for secret in planted.secrets:
        for line in secret.splitlines() or [secret]:
            for i in range(max(1, len(line) - WINDOW + 1)):
                window = line[i : i + WINDOW]
                if len(window) == WINDOW and window in redacted:
                    left.append(window)
    return left


def is_caught(redact: Callable[[str], str], planted: Planted) -> bool:
    """``redact`` changed the text and left no run of ``WINDOW`` characters of its secrets."""
    redacted = redact(planted.text)
    return redacted != planted.text and not survivors(redacted, planted)
