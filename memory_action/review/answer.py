"""The answer of one review request as data: a summary, the findings, the earlier findings fixed.

The model answers by calling the ``report_review`` tool (LangChain's ``ToolStrategy``: the
provider's tool calling, which GitHub Models, OpenAI and Anthropic all have). Its schema is given
to the model as JSON schema, derived from ``Finding``, and the tool's arguments come back
unvalidated: each finding is validated here on its own, so one bad finding is dropped with a note
instead of failing the whole answer (or costing a retry).

A forced tool is not a guarantee: llama.cpp's server does not enforce ``tool_choice``, and small
models write the call as text, bare JSON or in a ```json fence. ``parse`` recovers a JSON object
of the text that has the answer's shape (the tool's arguments, or a ``{"name": ..., "arguments":
...}`` call around them; pydantic coerces what is safe, such as a line number in quotes). A text
without one is a summary-only review that says so (``note``). An answer that does not parse is
``UnusableAnswerError``: cut off at the output cap, JSON that breaks off, or no text at all; the
engine does not count its files as reviewed and never passes its text on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain.agents.structured_output import ToolStrategy
from markdown_it import MarkdownIt

from memory_action.errors import AgentError
from memory_action.review.findings import Finding
from memory_action.safety import untrusted_json
from memory_action.safety.untrusted_json import first_error, location

ANSWER_TOOL = "report_review"
MAX_FINDINGS = 50  # of one answer; more is a model that lists every line
MAX_FIXED = 100
_DESCRIPTION = (
    "Your review. suggestion: replacement lines (RIGHT only); fixed: ids of earlier findings "
    "this change fixes."
)
# Keywords of pydantic's schema the model does not need (``parse`` checks them): every token of
# the schema is sent with every request of a review.
_UNSHOWN = frozenset({"title", "default", "minLength", "minimum", "additionalProperties"})


class _AnswerShape(pydantic.BaseModel):
    """Only to derive the JSON schema the model is shown; answers are parsed by ``parse``."""

    summary: str
    findings: list[Finding] = []
    fixed: list[str] = []


MAX_JSON_STARTS = 200  # of "{" positions tried in a text; a longer search is not worth it
PROSE = (
    "The model answered in plain text instead of calling report_review: this part of the "
    "review has its summary only, no findings on lines."
)
_CALL_KEYS = ("arguments", "parameters", "args", "input")  # where a written call keeps them


class UnusableAnswerError(AgentError):
    """The answer did not parse: its batch is not reviewed (``reason`` says why)."""

    def __init__(self, reason: str, *, retry: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry  # asking once more may help (a cut-off answer, not a loop)


class _Recovered(pydantic.BaseModel):
    """What a JSON object of the text must hold to be the answer; the rest is ``parse``'s."""

    summary: str
    findings: list[object] = []
    fixed: list[object] = []


@dataclass(frozen=True, kw_only=True)
class BatchAnswer:
    summary: str
    findings: tuple[Finding, ...] = ()
    fixed: tuple[str, ...] = ()  # ids of earlier findings the model says this change fixes
    dropped: tuple[str, ...] = ()  # one line per finding that did not validate
    note: str = ""  # how the answer came, when it did not come as the answer tool's call


def answer_schema() -> dict[str, Any]:
    """The answer tool's JSON schema, compact: what ``parse`` checks need not all be shown."""
    schema = _compact(_inlined(_AnswerShape.model_json_schema()))
    assert isinstance(schema, dict)  # noqa: S101 - a model's schema is an object
    return {**schema, "title": ANSWER_TOOL, "description": _DESCRIPTION}


def response_format() -> ToolStrategy[Any]:
    return ToolStrategy(answer_schema())


def parse(raw: object, text: str = "", *, cut_off: bool = False) -> BatchAnswer:
    """The answer tool's arguments, else the answer recovered from the text, else the text as a
    summary-only answer; ``UnusableAnswerError`` when the text is cut off (``cut_off``: it stopped
    at the output cap), broken JSON or empty."""
    if isinstance(raw, dict):
        return _from_arguments(raw, text)
    recovered = recover(text)
    if recovered is not None:
        return _from_arguments(recovered, "")
    if cut_off:
        raise UnusableAnswerError("the model's answer was cut off at its output cap")
    if looks_like_json(text):
        raise UnusableAnswerError("the model's answer was JSON that does not parse")
    if not text.strip():
        raise UnusableAnswerError("the model gave no answer")
    return BatchAnswer(summary=text.strip(), note=PROSE)


def recover(text: str) -> dict[str, Any] | None:
    """The answer tool's arguments written in ``text``: a JSON object in a code fence, the
    whole text, or one that starts inside it; the first that has the answer's shape."""
    for candidate in _json_objects(text):
        arguments = _arguments(candidate)
        if arguments is None:
            continue
        try:
            _Recovered.model_validate(arguments)
        except pydantic.ValidationError:
            continue
        return arguments
    return None


def looks_like_json(text: str) -> bool:
    """The text is (or opens with) an attempt at JSON or a fenced block: an answer tool's call
    written out, not prose, so it is not shown as the review when it does not parse."""
    stripped = text.strip()
    return stripped.startswith(("{", "[", "```", "~~~")) or f'"{ANSWER_TOOL}"' in stripped


def _json_objects(text: str) -> list[object]:
    fenced = [t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "fence"]
    found: list[object] = []
    for chunk in [*fenced, text]:
        decoder = json.JSONDecoder()
        starts = [i for i, char in enumerate(chunk) if char == "{"][:MAX_JSON_STARTS]
        for start in starts:
            try:
                value, _ = decoder.raw_decode(chunk, start)
            except ValueError:
                continue
            found.append(value)
    return found


def _arguments(value: object) -> dict[str, Any] | None:
    """The answer's arguments in a parsed JSON value: the value itself, or the arguments of a
    written ``report_review`` call (``{"name": ..., "arguments": {...}}``, arguments maybe a
    JSON string, perhaps under ``function``)."""
    if not isinstance(value, dict):
        return None
    call = value.get("function") if isinstance(value.get("function"), dict) else value
    assert isinstance(call, dict)  # noqa: S101 - chosen above
    if "name" in call and call.get("name") != ANSWER_TOOL:
        return None  # another tool's call, written out
    for key in _CALL_KEYS:
        inner = call.get(key)
        if isinstance(inner, str):
            try:
                inner = untrusted_json.loads(inner)
            except ValueError:
                return None
        if isinstance(inner, dict):
            return inner
    return value if "summary" in value else None


def _from_arguments(raw: dict[str, Any], text: str) -> BatchAnswer:
    summary = raw.get("summary")
    items = raw.get("findings")
    findings: list[Finding] = []
    dropped: list[str] = []
    for number, item in enumerate(items if isinstance(items, list) else [], start=1):
        if len(findings) >= MAX_FINDINGS:
            dropped.append(f"findings after the first {MAX_FINDINGS} were dropped")
            break
        try:
            findings.append(Finding.model_validate(item))
        except pydantic.ValidationError as exc:
            dropped.append(f"finding {number} was dropped: {_first_error(exc)}")
    fixed = raw.get("fixed")
    ids = [f for f in fixed if isinstance(f, str) and f.strip()] if isinstance(fixed, list) else []
    return BatchAnswer(
        summary=summary.strip() if isinstance(summary, str) else text.strip(),
        findings=tuple(findings),
        fixed=tuple(dict.fromkeys(i.strip() for i in ids[:MAX_FIXED])),
        dropped=tuple(dropped),
    )


def _first_error(exc: pydantic.ValidationError) -> str:
    error = first_error(exc)
    return f"{location(error, 'the finding')}: {error['msg']}"


def _inlined(schema: dict[str, Any]) -> object:
    """The schema with its one ``$ref`` (``Finding``) replaced by the definition."""
    definitions = schema.pop("$defs", {})

    def resolve(node: object) -> object:
        if isinstance(node, list):
            return [resolve(value) for value in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return resolve(definitions[ref.removeprefix("#/$defs/")])  # copied as it goes
        return {key: resolve(value) for key, value in node.items()}

    return resolve(schema)


def _compact(node: object) -> object:
    """Without ``_UNSHOWN`` keywords, and ``anyOf [X, null]`` (an optional field) as X."""
    if isinstance(node, list):
        return [_compact(value) for value in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        [kept] = [o for o in options if o != {"type": "null"}]
        node = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
    return {
        key: _compact(value)
        for key, value in node.items()
        if not (key in _UNSHOWN and not isinstance(value, dict))
    }
