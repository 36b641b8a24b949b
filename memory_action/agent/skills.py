"""Skills: procedures too long to inject every run, read by the agent when a task needs one.

A skill is ``<skills_path>/<folder>/SKILL.md``: front matter with a ``name`` and a one-line
``description``, then the body. Only names and descriptions go into the system prompt; the
``read_skill`` tool returns a body (its result bounded like every tool's by the review engine's
``RequestBudget``). Skills are read-only. On a pull request run they are read at the base commit
(``PullRequestReader.base_file_content``), never from the pull request's head, which a fork
controls: a skill the pull request adds is not there, one it edits is read as the base has it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from langchain_core.tools import BaseTool, StructuredTool

from memory_action.github.pull_request import MAX_FILE_BYTES, PullRequestReader, decode_text
from memory_action.memory.sources import find_symlink

SKILL_FILE = "SKILL.md"
MAX_SKILLS = 50
MAX_DESCRIPTION = 300
MAX_BODY_CHARS = 40_000  # the engine's budget cuts further when the request has less room
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*)")


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str
    description: str
    path: str  # repository-relative, for warnings and the summary
    body: str


def parse_skill(path: str, text: str) -> Skill | str:
    """The skill in ``text``, or why it is not one (one line naming the file)."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return f"{path}: no front matter (it must start with a line '---')"
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        return f"{path}: the front matter is not closed by a line '---'"
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _FIELD.fullmatch(line.rstrip())
        if match is None:
            return f"{path}: front matter line {line.strip()[:60]!r} is not 'key: value'"
        fields[match.group(1)] = match.group(2).strip().strip("\"'")
    name, description = fields.get("name", ""), fields.get("description", "")
    if not NAME.fullmatch(name):
        return f"{path}: name {name!r} must be lowercase letters, digits and '-', up to 64"
    if not description or len(description) > MAX_DESCRIPTION:
        return f"{path}: description must be one line of 1 to {MAX_DESCRIPTION} characters"
    return Skill(
        name=name,
        description=description,
        path=path,
        body="\n".join(lines[end + 1 :]).strip("\n") + "\n",
    )


def skill_paths(workspace: Path, folder: PurePosixPath) -> list[str]:
    """The ``SKILL.md`` files under ``folder`` of the checkout (names only: the contents may
    come from elsewhere). Links are not followed, at any depth (``linked_folder``)."""
    root = workspace.joinpath(*folder.parts)
    if linked_folder(workspace, folder) or not root.is_dir():
        return []
    found = [
        (folder / child.name / SKILL_FILE).as_posix()
        for child in sorted(root.iterdir())
        if child.is_dir()
        and not child.is_symlink()
        and (child / SKILL_FILE).is_file()
        and not (child / SKILL_FILE).is_symlink()
    ]
    return found[:MAX_SKILLS]


def skills_for(
    workspace: Path,
    folder: PurePosixPath | None,
    reader: PullRequestReader | None,
    warn: Callable[[str], None],
) -> SkillBook:
    """The run's skills: at the base commit on a pull request run, else the checkout's."""
    if folder is None:
        return SkillBook(skills={})
    link = linked_folder(workspace, folder)
    if link:
        warn(
            f"Skills skipped: skills_path {folder.as_posix()!r} goes through the symlink "
            f"{link!r}, which could offer skills from outside the checkout; use a plain folder."
        )
        return SkillBook(skills={})
    read = reader.base_file_content if reader is not None else _checkout_reader(workspace)
    return load_skills(skill_paths(workspace, folder), read, warn)


def linked_folder(workspace: Path, folder: PurePosixPath) -> str:
    """The first folder of ``folder`` (from the checkout's root down) that is a symlink, or "".

    Every component counts, as for ``memory_path``: a link above the skills' folder sends the
    listing (and a push run's reading) outside the checkout as surely as one at its end."""
    link = find_symlink(workspace, folder)
    return "" if link is None else link.as_posix()


def _checkout_reader(workspace: Path) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        file = workspace.joinpath(*PurePosixPath(path).parts)
        try:
            if find_symlink(workspace, PurePosixPath(path)) or file.stat().st_size > MAX_FILE_BYTES:
                return None
            return decode_text(file.read_bytes())
        except OSError:
            return None

    return read


@dataclass(kw_only=True)
class SkillBook:
    """The run's skills, and which of them the agent read."""

    skills: dict[str, Skill]
    used: list[str] = field(default_factory=list)

    def prompt_block(self) -> str:
        if not self.skills:
            return ""
        lines = [f"- {s.name}: {s.description}" for s in self.skills.values()]
        return (
            "Skills (procedures of this repository; read one with read_skill when the task "
            "needs it, and follow it):\n" + "\n".join(lines)
        )

    def read(self, name: str) -> str:
        skill = self.skills.get(name.strip())
        if skill is None:
            known = ", ".join(self.skills) or "none"
            return f"Error: no skill named {name.strip()!r}; the skills are: {known}."
        if skill.name not in self.used:
            self.used.append(skill.name)
        body = skill.body
        if len(body) > MAX_BODY_CHARS:
            body = body[:MAX_BODY_CHARS] + f"\n[truncated: the skill has {len(skill.body)} chars]"
        return body

    def tools(self) -> list[BaseTool]:
        if not self.skills:
            return []

        def read_skill(name: str) -> str:
            return self.read(name)

        return [
            StructuredTool.from_function(
                read_skill,
                description="The full text of one skill (a procedure of this repository), by "
                "its name as listed under Skills in your instructions.",
            )
        ]

    def note(self) -> str:
        return f"skills read: {', '.join(self.used)}" if self.used else ""


def load_skills(
    paths: list[str], read: Callable[[str], str | None], warn: Callable[[str], None]
) -> SkillBook:
    """The skills at ``paths``, each read with ``read``; a bad or unreadable file is skipped
    with a warning naming it, and a second skill of the same name is skipped too."""
    skills: dict[str, Skill] = {}
    for path in paths:
        text = read(path)
        if text is None:
            continue  # not on the base branch (a pull request adds it), or binary
        found = parse_skill(path, text)
        if isinstance(found, str):
            warn(f"Skill skipped: {found}.")
        elif found.name in skills:
            warn(f"Skill skipped: {path}: the name {found.name!r} is taken by another skill.")
        else:
            skills[found.name] = found
    return SkillBook(skills=skills)
