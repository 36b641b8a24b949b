"""The one gate every text the action sends or saves passes: ``gate`` and its ``SafeText``.

Whatever carries it (a sticky comment, a review and its inline comments, a reply to a command,
a maintenance pull request, a commit message on the memory branch, the job summary, a step
output, the findings ledger and provenance of a saved entry), a text leaves the run only as
``SafeText``, which only ``gate`` makes: the GitHub client's write methods, the workflow's
output and summary writers and the savers of ``state.json`` and ``provenance.json`` take
nothing else, so mypy refuses a text that did not pass here.

``gate`` always redacts secrets, with every layer of the detector (``safety.scrub``) and every
value the run masked, in the text as written and in the text as a reader sees it on GitHub
(``reader_view``: CommonMark rendered, character references decoded, invisible characters
removed, NFKC-folded); a secret only the reader sees is redacted in the source span that renders
to it, escapes, references and markup inside it included. Then, by ``Form``:

- ``MARKDOWN``: a document posted to GitHub, made safe as ``untrusted_markdown.safe_document``
  makes it: line ends as LF, no mention outside code, no raw HTML but the snippets of our own
  the caller names (``ours``: our markers, our ``<details>``), no fence left open, none of our
  markers forged;
- ``LINE``: one line (a pull request's title, a commit's headline), the same rules as prose;
- ``TEXT``: text kept as it is but for its secrets (memory, a machine-read value);
- ``JSON``: a JSON document saved: every string in it (keys too) redacted, nothing else changed.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from typing import final

from memory_action.safety.scrub import redact
from memory_action.safety.untrusted_markdown import normalise_line_ends, safe_document, safe_prose

__all__ = ["Form", "SafeText", "gate"]

_GATE_KEY = object()  # only ``gate`` holds it, so only ``gate`` makes a SafeText


class Form(enum.Enum):
    """What the text is, and so what besides redaction makes it safe (module docstring)."""

    MARKDOWN = "markdown"
    LINE = "line"
    TEXT = "text"
    JSON = "json"


@final
class SafeText:
    """A text that passed ``gate``; ``text`` is what may be sent or saved."""

    __slots__ = ("_text",)

    def __init__(self, text: str, key: object) -> None:
        if key is not _GATE_KEY:
            raise TypeError("a SafeText is made by outgoing.gate only")
        self._text = text

    @property
    def text(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"SafeText({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SafeText) and other.text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


def gate(
    text: str,
    masked: Iterable[str] = (),
    *,
    form: Form = Form.MARKDOWN,
    ours: Iterable[str] = (),
) -> SafeText:
    """``text`` made safe to send or save as ``form`` (see the module docstring); ``masked``:
    the values the run masked; ``ours``: raw HTML snippets of our own a Markdown document
    keeps (``untrusted_markdown.raw_html`` of what we wrote)."""
    values = tuple(masked)
    if form is Form.JSON:
        document = _redact_strings(json.loads(text), values)
        dumped = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        return SafeText(dumped, _GATE_KEY)
    if form is Form.TEXT:
        return SafeText(_redact(text, values), _GATE_KEY)
    redacted = _redact(normalise_line_ends(text), values)
    if form is Form.LINE:
        safe = safe_prose(" ".join(redacted.split()))
    else:
        safe = safe_document(redacted, ours)
    # Made safe, the text may read differently: raw HTML escaped shows its attributes, where a
    # reference spells out a secret. The text that leaves is judged again.
    return SafeText(safe if safe == redacted else _redact(safe, values), _GATE_KEY)


def _redact(text: str, masked: tuple[str, ...]) -> str:
    """``text`` without its secrets, also those only a reader sees (``scrub.redact``): text made
    safe before it reached the gate (a mention wrapped in code, "<" escaped) is redacted as if
    it had reached it first."""
    return redact(text, masked)[0]


def _redact_strings(value: object, masked: tuple[str, ...]) -> object:
    """A parsed JSON value with every string in it (keys too) redacted."""
    if isinstance(value, str):
        return _redact(value, masked)
    if isinstance(value, list):
        return [_redact_strings(item, masked) for item in value]
    if isinstance(value, dict):
        return {_redact(str(k), masked): _redact_strings(v, masked) for k, v in value.items()}
    return value
