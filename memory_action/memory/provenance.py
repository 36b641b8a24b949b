"""Where every memory entry came from: a ``provenance.json`` sidecar next to AGENTS.md.

An entry is a non-blank line of AGENTS.md, identified by its stripped text, so a record follows a
fact through moves and merges and is dropped when the fact is. Each record is the ``Stamp`` of the
run that wrote the entry (run, event, actor, PR, trust, time): ``forget`` and audits can name where
a fact came from, and the job summary can show it.

The sidecar is restored from the cache with the memory, so it is untrusted: loading validates
every field, caps sizes and never raises (a bad file is no provenance, not a failed run).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, TypeGuard

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from memory_action.memory.sources import normalise_text
from memory_action.safety import untrusted_json
from memory_action.safety.outgoing import Form, SafeText, gate

FILENAME = "provenance.json"
VERSION = 1
MAX_RECORDS = 5_000
MAX_ENTRY_CHARS = 2_000
MAX_FIELD_CHARS = 200
# Far above what memory within its size budget can produce: a bigger file is not ours and is
# not parsed at all.
MAX_FILE_BYTES = 8 * 1024 * 1024
UNKNOWN = "(unknown)"
_STRING_FIELDS = ("run_id", "run_attempt", "event", "actor", "trust", "time")


class _StampJson(BaseModel):
    """A stamp as the sidecar holds it: exactly these fields, strings and an integer or null
    (``Stamp`` checks their values)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    run_id: StrictStr
    run_attempt: StrictStr
    event: StrictStr
    actor: StrictStr
    pr: StrictInt | None
    trust: StrictStr
    time: StrictStr


class _SidecarJson(BaseModel):
    """The sidecar: its records are checked one by one (``_valid_records``)."""

    model_config = ConfigDict(extra="ignore")

    entries: dict[str, object]


@dataclass(frozen=True, kw_only=True)
class Stamp:
    """The run that wrote an entry. ``time`` is ISO-8601 UTC, e.g. ``2026-11-29T08:15:00Z``.

    Raises ``ValueError`` for a field that could break the sidecar or a rendering: text over
    ``MAX_FIELD_CHARS`` or with control characters, a PR number below 1, a time that is no
    ISO-8601 timestamp.
    """

    run_id: str
    run_attempt: str
    event: str
    actor: str
    pr: int | None
    trust: str
    time: str

    def __post_init__(self) -> None:
        for name in _STRING_FIELDS:
            _check_field(name, getattr(self, name))
        # bool is an int in Python, but never a PR number.
        if self.pr is not None and (type(self.pr) is not int or self.pr < 1):
            raise ValueError(f"pr must be a positive integer or None, not {self.pr!r}")
        _parse_time(self.time)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Stamp:
        """The stamp in ``data`` (as written by ``to_json``); ``ValueError`` if it is not one."""
        stamp = _StampJson.model_validate(data)  # a ValidationError is a ValueError
        return cls(**stamp.model_dump())

    def describe(self) -> str:
        """One line for blame and summaries: ``run 1234-1 push @mona pr#7 trusted 2026-11-29``."""
        pr = f" pr#{self.pr}" if self.pr is not None else ""
        day = _parse_time(self.time).date().isoformat()
        run = f"run {self.run_id}-{self.run_attempt}"
        return f"{run} {self.event} @{self.actor}{pr} {self.trust} {day}"


def iso_utc(seconds: float) -> str:
    """``seconds`` since the epoch as an ISO-8601 UTC timestamp to the second (``...Z``)."""
    moment = datetime.fromtimestamp(int(seconds), tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Numbered(Protocol):
    @property
    def number(self) -> int: ...


class RunFacts(Protocol):
    """What a stamp records of a run (``context.RunContext`` has it)."""

    @property
    def run_id(self) -> str: ...

    @property
    def run_attempt(self) -> str: ...

    @property
    def event_name(self) -> str: ...

    @property
    def actor(self) -> str: ...

    @property
    def pull_request(self) -> _Numbered | None: ...

    @property
    def trust(self) -> str: ...


def stamp_for_run(context: RunFacts, now: float) -> Stamp:
    """The stamp of this run; ``now`` comes from the caller's (injectable) clock.

    Never raises: a field a stamp cannot hold (empty, e.g. a local run) becomes ``unknown``.
    """
    pull_request = context.pull_request
    return Stamp(
        run_id=_or_unknown(context.run_id),
        run_attempt=_or_unknown(context.run_attempt),
        event=_or_unknown(context.event_name),
        actor=_or_unknown(context.actor),
        pr=pull_request.number if pull_request is not None and pull_request.number > 0 else None,
        trust=_or_unknown(str(context.trust)),
        time=iso_utc(now),
    )


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Entry text (a stripped line of AGENTS.md) → the stamp of the run that wrote it."""

    records: dict[str, Stamp]

    @classmethod
    def load(cls, path: Path) -> Provenance:
        """The sidecar at ``path``; missing, unreadable or invalid → empty. Never raises.

        Invalid records are skipped one by one; at most ``MAX_RECORDS`` are kept.
        """
        return cls(records=_records_of(_read_json(path)))

    @classmethod
    def from_text(cls, text: str) -> Provenance:
        """The sidecar's records from its text (as ``load`` validates them); never raises."""
        if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            return cls(records={})
        try:
            data = untrusted_json.loads(text)
        except ValueError:
            return cls(records={})
        return cls(records=_records_of(data))

    def dump(self, path: Path, masked: Iterable[str] = ()) -> None:
        """Write the sidecar atomically (a temporary file and a rename), keys sorted, through
        the outgoing gate (an actor or an entry could hold a secret)."""
        document = {
            "version": VERSION,
            "entries": {text: stamp.to_json() for text, stamp in sorted(self.records.items())},
        }
        _write_atomic(path, gate(json.dumps(document), masked, form=Form.JSON))


def entries(text: str) -> list[str]:
    """The entries of a memory text, in order, each once."""
    return list(dict.fromkeys(_stripped_lines(text)))


def update(prov: Provenance, before: str, after: str, stamp: Stamp) -> Provenance:
    """Provenance for ``after``: new or changed entries get ``stamp``, others keep their record.

    Entries that are no longer in ``after`` lose their record; an unchanged entry without a
    record stays without one (this run did not write it).
    """
    old = set(_stripped_lines(before))
    records: dict[str, Stamp] = {}
    for entry in entries(after):
        if entry not in old:
            records[entry] = stamp
        elif entry in prov.records:
            records[entry] = prov.records[entry]
    return Provenance(records=records)


def carry(prov: Provenance, stamp_for_entry: Mapping[str, Stamp]) -> Provenance:
    """Give entries the stamps they had elsewhere (promotion keeps the original PR's stamps).

    Only entries that have a record in ``prov`` are changed, so call it after ``update``.
    """
    carried = {entry.strip(): stamp for entry, stamp in stamp_for_entry.items()}
    return Provenance(
        records={entry: carried.get(entry, stamp) for entry, stamp in prov.records.items()}
    )


def merge(a: Provenance, b: Provenance) -> Provenance:
    """The union of two heads' records; for the same entry the older stamp wins (ties: ``a``)."""
    records = dict(a.records)
    for entry, stamp in b.records.items():
        mine = records.get(entry)
        if mine is None or _parse_time(stamp.time) < _parse_time(mine.time):
            records[entry] = stamp
    return Provenance(records=records)


def changed_entries(before: str, after: str, prov: Provenance) -> list[tuple[str, Stamp | None]]:
    """Entries of ``after`` that ``before`` lacks (added or edited), with their records."""
    old = set(_stripped_lines(before))
    return [(entry, prov.records.get(entry)) for entry in entries(after) if entry not in old]


def render_blame(text: str, prov: Provenance) -> str:
    """Every line of ``text`` prefixed with where it came from, like ``git blame``.

    Blank lines get an empty prefix; a line without a record gets ``(unknown)``.
    """
    lines = normalise_text(text).split("\n")
    if lines[-1] == "":
        lines.pop()
    labels = [_label(line, prov) for line in lines]
    width = max((len(label) for label in labels), default=0)
    rows = (f"{label.ljust(width)} | {line}" for label, line in zip(labels, lines, strict=True))
    # A blank memory line leaves no trailing spaces behind the bar.
    return "".join(f"{row.rstrip() if row.endswith('| ') else row}\n" for row in rows)


def render_changes_markdown(changed: Iterable[tuple[str, Stamp | None]]) -> str:
    """A Markdown table of entries and their provenance; empty when there are none."""
    rows = [
        f"| {_escape(entry)} | {_escape(stamp.describe() if stamp else UNKNOWN)} |\n"
        for entry, stamp in changed
    ]
    if not rows:
        return ""
    return "| Entry | Written by |\n|---|---|\n" + "".join(rows)


def _label(line: str, prov: Provenance) -> str:
    entry = line.strip()
    if not entry:
        return ""
    stamp = prov.records.get(entry)
    return stamp.describe() if stamp is not None else UNKNOWN


def _escape(text: str) -> str:
    """Table-cell safe: no column breaks, code spans or HTML from memory text."""
    for char in ("\\", "|", "`"):
        text = text.replace(char, f"\\{char}")
    return text.replace("<", "&lt;")


def _stripped_lines(text: str) -> Iterable[str]:
    stripped = (line.strip() for line in normalise_text(text).split("\n"))
    return (line for line in stripped if line)


def _or_unknown(value: str) -> str:
    try:
        _check_field("value", value)
    except ValueError:
        return "unknown"
    return value


def _check_field(name: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    if len(value) > MAX_FIELD_CHARS or not value.isprintable():
        raise ValueError(f"{name} is too long or has control characters: {value[:40]!r}")


def _parse_time(value: str) -> datetime:
    """An aware UTC datetime; a timestamp without a zone is taken as UTC, another zone refused."""
    moment = datetime.fromisoformat(value)
    if moment.utcoffset() not in (None, timedelta(0)):
        raise ValueError(f"time must be UTC, not {value!r}")
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _records_of(document: object) -> dict[str, Stamp]:
    """The valid records of a parsed sidecar; none when it is not a sidecar."""
    try:
        sidecar = _SidecarJson.model_validate(document)
    except ValidationError:
        return {}
    return _valid_records(sidecar.entries)


def _valid_records(raw: dict[str, object]) -> dict[str, Stamp]:
    records: dict[str, Stamp] = {}
    for entry, value in raw.items():
        if len(records) >= MAX_RECORDS:
            break
        if not _valid_entry(entry):
            continue
        try:
            records[entry] = Stamp.from_json(value)
        except ValueError:
            continue
    return records


def _valid_entry(entry: object) -> TypeGuard[str]:
    return (
        isinstance(entry, str)
        and 0 < len(entry) <= MAX_ENTRY_CHARS
        and entry == entry.strip()
        and "\n" not in entry
        and "\r" not in entry
    )


def _read_json(path: Path) -> object:
    """Parsed JSON of a regular file of at most ``MAX_FILE_BYTES``; None for anything else."""
    try:
        # O_NOFOLLOW: a planted symlink must not make us read another file;
        # O_NONBLOCK: a FIFO must not hang the run.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None
        return untrusted_json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        # ValueError covers bad UTF-8, bad JSON and JSON nested too deep.
        return None


def _write_atomic(path: Path, safe: SafeText) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(safe.text)
        Path(temporary).chmod(0o644)  # mkstemp makes 0600; provenance is not secret
        Path(temporary).replace(path)  # replaces a planted link itself, never its target
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
