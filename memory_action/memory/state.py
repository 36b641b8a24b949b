"""What a memory entry carries besides AGENTS.md, and which files a restored entry may hold.

Every saved entry holds ``.memory-agent/state.json``: the layer, the AGENTS.md text the saving
run started from (``base``) and the keys it merged (``parents``). With them a later run can
three-way merge entries that raced, and re-apply a pull request's overlay on newer committed
memory. A pull request's overlay also keeps its findings ledger there (``review_ledger``).
Restored entries are untrusted: anything but the expected files is removed, and a state
file that does not validate is ignored.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr, ValidationError

from memory_action.errors import MemoryFileError
from memory_action.memory.review_ledger import ReviewLedger, parse_ledger
from memory_action.memory.sources import normalise_text
from memory_action.safety import untrusted_json
from memory_action.safety.outgoing import Form, SafeText, gate
from memory_action.safety.trees import remove_tree

MEMORY_FILE = "AGENTS.md"
PROVENANCE_FILE = "provenance.json"
STATE_DIR = ".memory-agent"
STATE_FILE = f"{STATE_DIR}/state.json"
EXPECTED_FILES = frozenset({MEMORY_FILE, PROVENANCE_FILE, STATE_FILE})
STATE_FORMAT = 1
MAX_STATE_BYTES = 2 * 1024 * 1024
MAX_PARENTS = 64
_DIGEST = re.compile(r"[0-9a-f]{64}")


class Layer(enum.StrEnum):
    COMMITTED = "committed"  # the memory every run of the scope starts from
    OVERLAY = "overlay"  # what one pull request's runs learned, on top of committed memory


@dataclass(frozen=True, kw_only=True)
class EntryState:
    layer: Layer
    base: str  # the AGENTS.md text the saving run started from (an overlay: applies on top of)
    parents: tuple[str, ...] = ()  # keys whose content this entry already holds
    review: ReviewLedger | None = None  # a pull request's findings ledger (its overlay)
    # What the last maintenance saw (``citations.CitationChecker.digest``): equal at the next
    # maintenance means nothing changed, and the model is not called.
    maintained: str = ""

    def to_json(self) -> str:
        document: dict[str, Any] = {
            "format": STATE_FORMAT,
            "layer": self.layer,
            "base": self.base,
            "parents": list(self.parents),
        }
        if self.review is not None:
            document["review"] = self.review.model_dump(mode="json")
        if self.maintained:
            document["maintained"] = self.maintained
        return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"

    def dump(self, folder: Path, masked: Iterable[str] = ()) -> None:
        """Write ``state.json`` through the outgoing gate (its ledger holds what the model wrote:
        finding titles and paths; anyone who can read the cache can read it)."""
        _write_state(folder / STATE_FILE, gate(self.to_json(), masked, form=Form.JSON))


def _write_state(path: Path, text: SafeText) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(text.text, encoding="utf-8")
    temp.replace(path)


def load_state(folder: Path) -> EntryState | None:
    """The entry's state, or None when absent or invalid (an entry from an older version, or
    one that was tampered with: it is then treated as having no history)."""
    path = folder / STATE_FILE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_STATE_BYTES:
            return None
        document = untrusted_json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: bad UTF-8, not JSON, or nested too deep
        return None
    return _parse_state(document)


def _encodable(value: str) -> str:
    """A string UTF-8 can encode: a JSON escape can spell a lone surrogate, which the saving
    run could never write back (``EntryState.dump`` would raise)."""
    value.encode("utf-8")  # UnicodeEncodeError is a ValueError: the model refuses it
    return value


_Text = Annotated[StrictStr, AfterValidator(_encodable)]


class _StateDocument(BaseModel):
    """``state.json`` as it is read back (untrusted: from a restored entry)."""

    model_config = ConfigDict(extra="ignore")

    format: Literal[1]  # STATE_FORMAT
    layer: Layer
    base: _Text
    parents: list[Annotated[_Text, Field(max_length=512)]] = Field(max_length=MAX_PARENTS)
    review: object = None  # checked alone by ``parse_ledger``
    maintained: object = ""


def _parse_state(document: Any) -> EntryState | None:
    try:
        state = _StateDocument.model_validate(document)
    except ValidationError:
        return None
    # A ledger that does not validate is dropped alone: the memory's history stays usable.
    review = parse_ledger(state.review)
    maintained = state.maintained
    if not (isinstance(maintained, str) and _DIGEST.fullmatch(maintained or "0" * 64)):
        maintained = ""  # not ours: the next maintenance simply calls the model
    return EntryState(
        layer=state.layer,
        base=state.base,
        parents=tuple(state.parents),
        review=review,
        maintained=maintained,
    )


def sanitize_folder(folder: Path) -> list[str]:
    """Remove everything in a restored folder but the expected regular files; what was removed.

    Only the two levels the expected files live on are listed; anything else is removed whole,
    without recursion (an untrusted tree can be thousands of levels deep).
    """
    if folder.is_symlink() or not folder.is_dir():
        return []
    removed = _keep_only(folder, "", EXPECTED_FILES)
    state_dir = folder / STATE_DIR
    if state_dir.is_dir() and not state_dir.is_symlink():
        removed += _keep_only(state_dir, f"{STATE_DIR}/", EXPECTED_FILES)
    return removed


def _keep_only(folder: Path, prefix: str, expected: frozenset[str]) -> list[str]:
    """Remove each entry of ``folder`` that is neither an expected regular file nor the
    expected state folder; names come back prefixed with ``prefix``."""
    removed: list[str] = []
    for child in sorted(folder.iterdir()):
        name = prefix + child.name
        if name in expected and child.is_file() and not child.is_symlink():
            continue
        if name == STATE_DIR and child.is_dir() and not child.is_symlink():
            continue
        removed += [prefix + path for path in remove_tree(child)]
    return removed


def read_memory(folder: Path, where: str) -> str:
    """AGENTS.md's text ("" when missing); ``MemoryFileError`` when it is not UTF-8 text."""
    path = folder / MEMORY_FILE
    if path.is_symlink() or not path.is_file():
        return ""
    try:
        return normalise_text(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryFileError(
            f"The memory restored from {where} cannot be read as UTF-8 text ({exc}); "
            "delete that cache entry or fix it."
        ) from None


def write_memory(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MEMORY_FILE
    temp = folder / f".{MEMORY_FILE}.tmp"
    temp.write_text(text, encoding="utf-8")
    temp.replace(path)
