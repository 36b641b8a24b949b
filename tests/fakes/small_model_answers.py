"""Answers of the kind a small local model gave (issue 20: Qwen2.5-Coder 1.5B and 0.5B on
llama.cpp's server, which does not enforce ``tool_choice``), for the OpenAI-compatible stub.

They review ``feature_repository``'s change: ``src/app.py`` line 3 became ``line three`` and
line 18 went; its hunks show lines 1-6 and 15-20 of the new file (context and the one added
line, 3), line 10 is outside every hunk.
"""

from __future__ import annotations

import json
from typing import Any

SUMMARY = "The change spells line 3 out and drops line 18 without a word."
FINDING = {
    "path": "src/app.py",
    "line": "3",  # a number in quotes, as small models write it
    "severity": "low",
    "title": "Spelled-out number",
    "body": "`line three` breaks the pattern of the other lines.",
}
ARGUMENTS = {"summary": SUMMARY, "findings": [FINDING]}

# The call written as the whole answer, as bare JSON (0 of 12 real tool calls came as calls).
BARE_CALL = json.dumps({"name": "report_review", "arguments": ARGUMENTS})
# The arguments alone in a ```json fence after a sentence.
FENCED = (
    f"Here is my review of the pull request.\n\n```json\n{json.dumps(ARGUMENTS, indent=2)}\n```\n"
)
# The arguments as a JSON string inside the call, as OpenAI sends them on the wire.
STRING_ARGUMENTS = json.dumps({"name": "report_review", "arguments": json.dumps(ARGUMENTS)})

# Cut off at the output cap (finish_reason "length"): prose, and the call.
CUT_TEXT = "The pull request changes src/app.py. Line 3 now reads `line three`, and the"
CUT_CALL = '{"name": "report_review", "arguments": {"summary": "The change spells line 3 out'
# Broken JSON that did end (finish_reason "stop").
BROKEN_FENCE = '```json\n{"summary": "Looks fine", "findings": [{"path": "src/app.py",\n```\n'

# A model writing another tool's call as text is not answering.
OTHER_TOOL = json.dumps({"name": "read_file", "arguments": {"path": "src/app.py"}})


def finding(**changes: Any) -> dict[str, Any]:
    return {**FINDING, **changes}
