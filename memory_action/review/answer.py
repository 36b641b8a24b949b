"""The answer of one review request as data: a summary, the findings, the earlier findings fixed.

The model answers by calling the ``report_review`` tool (LangChain's ``ToolStrategy``: the
provider's tool calling, which GitHub Models, OpenAI and Anthropic all have). Its schema is given
to the model as JSON schema, derived from ``Finding``, and the tool's arguments come back
unvalidated: each finding is validated here on its own, so one bad finding is dropped with a note
instead of failing the whole answer (or costing a retry). A model that answers in plain text
anyway gives a summary without findings.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain.agents.structured_output import ToolStrategy

from memory_action.review.findings import Finding

ANSWER_TOOL = "report_review"
MAX_FINDINGS = 50  # of one answer; more is a model that lists every line
MAX_FIXED = 100
_DESCRIPTION = (
    "Report your review of this request: a short Markdown summary, the findings (each on lines "
    "of the diff shown: RIGHT for added or unchanged lines with the new file's numbers, LEFT for "
    "deleted lines with the old file's numbers; 'suggestion' replaces the lines, RIGHT only), and "
    "the ids of earlier findings this change fixes."
)


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
    """The answer tool's JSON schema, without pydantic's titles (tokens the model need not read)."""
    schema = _untitled(copy.deepcopy(_AnswerShape.model_json_schema()))
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


def _untitled(node: object) -> object:
    if isinstance(node, dict):
        return {
            key: _untitled(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_untitled(value) for value in node]
    return node
