"""The proposal section of a sticky comment, replaced in place by a run that changes only it.

A comment command on a pull request changes the memory proposal and nothing else: the review
the comment shows stays as the last review left it. The section is found by its block, which no
text we post can forge (``report.break_markers``), and the checklist heading right before it.
"""

from __future__ import annotations

from memory_action.memory.proposals import BLOCK_PREFIX, HEADING, VERSION

MEMORY_SECTION = "\n\n**Memory:**"  # where report.render_comment starts the memory section


def with_proposal(body: str, agent: str, proposal: str) -> str:
    """``body`` with its proposal section replaced by ``proposal`` ("" removes it); one without
    a section gets ``proposal`` before its memory section (at the end if it has none)."""
    proposal = proposal.strip("\n")
    found = _section(body, agent)
    if found is not None:
        start, end = found
        parts = (body[:start].rstrip("\n"), proposal, body[end:].lstrip("\n"))
        return "\n\n".join(part for part in parts if part)
    if not proposal:
        return body
    at = body.rfind(MEMORY_SECTION)
    if at == -1:
        return f"{body.rstrip()}\n\n{proposal}\n"
    return f"{body[:at]}\n\n{proposal}{body[at:]}"


def _section(body: str, agent: str) -> tuple[int, int] | None:
    """Where the checklist and block of ``agent`` are in ``body``."""
    block = body.find(f"{BLOCK_PREFIX}v{VERSION} {agent}\n")
    if block == -1:
        return None
    end = body.find("-->", block + len(BLOCK_PREFIX))
    if end == -1:
        return None
    heading = body.rfind(f"{HEADING}\n", 0, block)
    return (heading if heading != -1 else block), end + len("-->")
