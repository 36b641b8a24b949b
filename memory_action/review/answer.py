"""The answer of one review request as data: a summary, the findings, the earlier findings fixed.

The model answers by calling the ``report_review`` tool (LangChain's ``ToolStrategy``: the
provider's tool calling, which GitHub Models, OpenAI and Anthropic all have). Its schema is given
to the model as JSON schema, derived from ``Finding``, and the tool's arguments come back
unvalidated: each finding is validated here on its own, so one bad finding is dropped with a note
instead of failing the whole answer (or costing a retry). A model that answers in plain text
anyway gives a summary without findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic
from langchain.agents.structured_output import ToolStrategy

from memory_action.review.findings import Finding

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


@dataclass(frozen=True)
class BatchAnswer:
    summary: str
    findings: tuple[Finding, ...] = ()
    fixed: tuple[str, ...] = ()  # ids of earlier findings the model says this change fixes
    dropped: tuple[str, ...] = ()  # one line per finding that did not validate


def answer_schema() -> dict[str, Any]:
    """The answer tool's JSON schema, compact: what ``parse`` checks need not all be shown."""
    schema = _compact(_inlined(_AnswerShape.model_json_schema()))
    assert isinstance(schema, dict)  # noqa: S101 - a model's schema is an object
    return {**schema, "title": ANSWER_TOOL, "description": _DESCRIPTION}


def response_format() -> ToolStrategy[Any]:
    return ToolStrategy(answer_schema())


def parse(raw: object, text: str = "") -> BatchAnswer:
    """The answer tool's arguments (else the plain text answer) as a ``BatchAnswer``."""
    if not isinstance(raw, dict):
        return BatchAnswer(summary=text.strip())
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
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the finding"
    return f"{where}: {error['msg']}"


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
