"""What a careful model does with a review request: read every changed file before answering.

``DiligentReviewer`` looks only at the request (OpenAI chat-completions JSON: ``messages``,
``tools``), never at the engine's code, so it judges today's engine and the budgeted one alike.
A changed file is SEEN when the request shows its patch:

- a line ``### <status> <path>`` (the budgeted engine's rendering of a file, ``(+a -d)`` after);
- a tool result of ``get_file_patch`` (``<status> <path> (+a -d)`` then the patch) or of
  ``get_file_patch`` / ``read_file`` called with that path (not an ``Error:``).

A file named after ``Reviewed in other requests`` (comma separated, a folder's group ``folder/: a,
{b, c}/d`` ended by ``;``, braces as a shell expands them, a name in double quotes read as a JSON
string), or in backticks inside a ``## Findings of part`` section, is HANDLED elsewhere. When the
last message is the user's or a tool's and some file is neither, it calls a tool:
``list_changed_files`` first when offered and never called (today's engine), else ``get_file_patch``
for the first such file, else ``read_file``. Otherwise (or with no tool to call) it answers with a
short review naming the files it saw, about ``TOKENS_PER_FILE`` tokens each. When the request offers
the answer tool (``report_review``), the answer is a call to it: that review as the summary, and
findings on random lines of the hunks shown (seeded by the file, so the same file draws from the
same few findings on every push), about one in four of them invalid: a line outside the hunks, a
start line in another hunk, a suggestion on a deleted line, a path the pull request does not change,
a line 0.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TOKENS_PER_FILE = 40
ANSWER_TOOL = "report_review"
FINDINGS_PER_FILE = (0, 3)  # drawn from a pool of 4 per file
INVALID_SHARE = 0.25
_FILE = re.compile(r"^### \S+ (\S+)(?: \(.*\))?$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
FILE_TOOLS = ("get_file_patch", "read_file")
_ELSEWHERE = re.compile(r"Reviewed in other requests[^:\n]*:[ \t]*(.*)")
_FINDINGS = re.compile(r"^## Findings of part.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_BACKTICKED = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    text: str


Decision = ToolCall | Answer


@dataclass(frozen=True)
class Reading:
    """What one request shows of the pull request."""

    seen: frozenset[str]
    elsewhere: frozenset[str]


class DiligentReviewer:
    def __init__(self, changed_paths: Sequence[str]) -> None:
        self.changed_paths = list(changed_paths)
        self.calls = 0  # answers with findings given

    def read(self, request: dict[str, Any]) -> Reading:
        messages: list[dict[str, Any]] = request.get("messages") or []
        texts = [message_text(m) for m in messages]
        seen = {p for p in self.changed_paths if any(_rendered(p, text) for text in texts)}
        seen |= self._read_by_tools(messages)
        elsewhere: set[str] = set()
        for text in texts:
            elsewhere |= self._named_elsewhere(text)
        return Reading(frozenset(seen), frozenset(elsewhere - seen))

    def decide(self, request: dict[str, Any]) -> Decision:
        messages: list[dict[str, Any]] = request.get("messages") or []
        reading = self.read(request)
        offered = tool_names(request)
        missing = [p for p in self.changed_paths if p not in reading.seen | reading.elsewhere]
        last_role = messages[-1].get("role") if messages else None
        if missing and last_role in ("user", "tool"):
            if "list_changed_files" in offered and "list_changed_files" not in _called(messages):
                return ToolCall("list_changed_files", {})
            for tool in FILE_TOOLS:
                if tool in offered:
                    return ToolCall(tool, {"path": missing[0]})
        text = self._review(reading)
        if ANSWER_TOOL in offered:
            return ToolCall(ANSWER_TOOL, {"summary": text, "findings": self._findings(messages)})
        return Answer(text)

    def _findings(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        shown = _shown_lines(
            "\n".join(message_text(m) for m in messages if m.get("role") == "user")
        )
        self.calls += 1
        found: list[dict[str, Any]] = []
        for path, lines in shown.items():
            pool = _pool(path, lines)
            rng = random.Random(f"{path}:{self.calls}")  # noqa: S311 - test data
            found += rng.sample(pool, min(len(pool), rng.randint(*FINDINGS_PER_FILE)))
        return found

    def _read_by_tools(self, messages: list[dict[str, Any]]) -> set[str]:
        calls = _calls_by_id(messages)
        seen: set[str] = set()
        for message in messages:
            if message.get("role") != "tool":
                continue
            text = message_text(message)
            seen |= {p for p in self.changed_paths if _patch_result(p, text)}
            name, path = calls.get(str(message.get("tool_call_id")), ("", ""))
            if name in FILE_TOOLS and path in self.changed_paths and not text.startswith("Error"):
                seen.add(path)
        return seen

    def _named_elsewhere(self, text: str) -> set[str]:
        named = {
            name for match in _ELSEWHERE.finditer(text) for name in listed_names(match.group(1))
        }
        for section in _FINDINGS.finditer(text):
            named |= set(_BACKTICKED.findall(section.group(0)))
        return named & set(self.changed_paths)

    def _review(self, reading: Reading) -> str:
        seen = [p for p in self.changed_paths if p in reading.seen]
        if not seen:
            others = [p for p in self.changed_paths if p in reading.elsewhere]
            if not others:
                return "Nothing to review: no changed file was shown."
            return "Review of the parts:\n" + "".join(_file_note(p, "covered") for p in others)
        return "Review:\n" + "".join(_file_note(p, "reviewed") for p in seen)


def _file_note(path: str, verdict: str) -> str:
    """About TOKENS_PER_FILE tokens (4 characters each) per file."""
    line = f"- `{path}`: {verdict}, no issues found in this change; the code reads clearly"
    return line.ljust(TOKENS_PER_FILE * 4 - 1, ".") + "\n"


def message_text(message: dict[str, Any]) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def tool_names(request: dict[str, Any]) -> set[str]:
    tools: list[dict[str, Any]] = request.get("tools") or []
    return {str((t.get("function") or {}).get("name")) for t in tools}


def _rendered(path: str, text: str) -> bool:
    return re.search(rf"^### \S+ {re.escape(path)}(?=$|[ (])", text, re.MULTILINE) is not None


def _patch_result(path: str, text: str) -> bool:
    return re.match(rf"\S+ {re.escape(path)} \(\+\d+ -\d+\)", text) is not None


def _calls_by_id(messages: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """tool_call_id → (tool name, its ``path`` argument)."""
    found: dict[str, tuple[str, str]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            path = args.get("path", "") if isinstance(args, dict) else ""
            found[str(call.get("id"))] = (str(function.get("name")), str(path))
    return found


def _called(messages: list[dict[str, Any]]) -> set[str]:
    return {name for name, _path in _calls_by_id(messages).values()}


def _shown_lines(text: str) -> dict[str, list[tuple[str, int, int]]]:
    """path → (side, line, hunk index) of every line of the hunks the request shows."""
    shown: dict[str, list[tuple[str, int, int]]] = {}
    path, old, new, hunk = "", 0, 0, -1
    for line in text.splitlines():
        named = _FILE.match(line)
        if named:
            path, hunk = named.group(1), -1
            shown.setdefault(path, [])
            continue
        header = _HUNK.match(line)
        if header and path:
            old, new, hunk = int(header.group(1)), int(header.group(2)), hunk + 1
            continue
        if not path or hunk < 0 or line[:1] not in (" ", "+", "-"):
            continue
        if line[:1] == "-":
            shown[path].append(("LEFT", old, hunk))
            old += 1
            continue
        shown[path].append(("RIGHT", new, hunk))
        new, old = new + 1, old + (line[:1] == " ")
    return {p: lines for p, lines in shown.items() if lines}


def _pool(path: str, lines: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """Four findings for the file, the same on every request that shows the same lines."""
    rng = random.Random(path)  # noqa: S311 - test data
    pool = []
    for number in range(4):
        side, line, hunk = rng.choice(lines)
        finding: dict[str, Any] = {
            "path": path,
            "line": line,
            "side": side,
            "severity": rng.choice(["high", "medium", "low"]),
            "title": f"Finding {number} on line {line} of {path.rsplit('/', 1)[-1]}",
            "body": "Something to look at on this line.",
        }
        if rng.random() < INVALID_SHARE:
            finding.update(_invalid(rng, lines, hunk))
        pool.append(finding)
    return pool


def _invalid(rng: random.Random, lines: list[tuple[str, int, int]], hunk: int) -> dict[str, Any]:
    kind = rng.randrange(5)
    last = max(n for _s, n, _h in lines)
    other = [n for s, n, h in lines if h != hunk and s == "RIGHT"]
    if kind == 0:
        return {"line": last + 500, "side": "RIGHT"}
    if kind == 1 and other:
        return {"start_line": min(other), "line": max(n for _s, n, _h in lines)}
    if kind == 2:
        return {"side": "LEFT", "suggestion": "pass"}
    if kind == 3:
        return {"path": "src/click/not_changed.py"}
    return {"line": 0}


def listed_names(line: str) -> set[str]:
    """The names of a list ``src/: a.py, {b, c}/d.py; docs/x.md, "odd, name"`` as a reader
    takes it (a shell's braces: ``{b, c}/d.py`` is ``b/d.py`` and ``c/d.py``)."""
    names: set[str] = set()
    for group in _unquoted_split(line, ";"):
        folder, items = "", group
        head = _unquoted_split(group, ":")
        if len(head) > 1 and _name(head[0]).endswith("/"):
            folder, items = _name(head[0]), ":".join(head[1:])
        for listed in _unquoted_split(items, ","):
            item = re.sub(r" and \d+ more$", "", listed.strip())
            braced = re.fullmatch(r"\{(.*)\}/(.*)", item)
            heads = _unquoted_split(braced.group(1), ",") if braced else [item]
            tail = "/" + braced.group(2) if braced else ""
            names |= {folder + _name(head) + tail for head in heads}
    return names


def _name(item: str) -> str:
    item = item.strip().strip("`")
    if item.startswith('"'):
        try:
            return str(json.loads(item))
        except ValueError:
            return item
    return item


def _unquoted_split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside double-quoted (JSON) strings and braces."""
    parts, current, quoted, escaped, braces = [], "", False, False, 0
    for char in text:
        if quoted:
            escaped, quoted = (not escaped and char == "\\"), quoted and (escaped or char != '"')
        elif char == '"':
            quoted = True
        elif char in "{}":
            braces += 1 if char == "{" else -1
        elif char == separator and not braces:
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]
