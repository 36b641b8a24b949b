"""A memory store in a local directory, with exactly the Actions cache's semantics.

The embedded default outside GitHub Actions (``memory-agent review --store-dir``,
``memory-agent memory show|diff``). Entries are immutable, keys follow the cache's rules, and a
restore tries the primary key exactly, then as a prefix, then each restore key exactly and as a
prefix; among several prefix matches the newest created wins (ties broken by a creation sequence).
Layout under ``root``::

    root/
      .lock              held (flock) while a save takes the next sequence number
      .sequence          the last sequence number handed out
      .tmp-<hex>/        a save being built; renamed into place when complete
      <sha256 of key>/   one immutable entry
        entry.json       {"format", "key", "created", "sequence", "size", "files": [...]}
        files/           a copy of the memory folder's regular files

Nothing here raises for a miss, a refused key, a corrupt entry or disk trouble: ``restore`` and
``save`` report it in their result, like every store.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from memory_action.safety import untrusted_json
from memory_action.safety.trees import MAX_TREE_DEPTH, discard_tree, remove_tree
from memory_action.safety.untrusted_json import first_error
from memory_action.store.base import RestoreKeys, RestoreResult, SaveResult
from memory_action.store.keys import key_problem, keys_problem

if sys.platform != "win32":
    import fcntl

ENTRY_FORMAT = 1
STORE_DIR_VARIABLE = "MEMORY_AGENT_STORE_DIR"  # where the CLI keeps its store

_ENTRY_FILE = "entry.json"
_HEX = frozenset("0123456789abcdef")  # an entry folder's name: the key's SHA-256
_FILES_DIR = "files"
_TMP_PREFIX = ".tmp-"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_SEQUENCE_LOCK = threading.Lock()  # flock is per open file; this also covers platforms without it


@dataclass(frozen=True, kw_only=True)
class StoredEntry:
    """One entry as the CLI lists it."""

    key: str
    created: datetime
    size: int  # bytes of file content
    files: tuple[str, ...]  # relative POSIX paths, sorted


class EntryStore(Protocol):
    """What reads and writes entries for people (``memory`` commands, the local layer admin):
    the whole store, or one repository's part of it (``local.repository``)."""

    @property
    def name(self) -> str: ...

    def save(self, key: str, folder: Path) -> SaveResult: ...

    def entries(self, prefix: str = "") -> list[StoredEntry]: ...

    def read_entry(self, key: str) -> dict[str, str]: ...


class _CorruptEntry(Exception):  # noqa: N818 - private, never leaves this module
    """An entry's folder cannot be used; the message says why."""


class _Refused(Exception):  # noqa: N818 - private, never leaves this module
    """The matched entry cannot be restored: its files are corrupt, links or too deep."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


class _NotRegular(Exception):  # noqa: N818 - private, never leaves this module
    """A path is a symbolic link or a special file; the message says which."""


@dataclass(frozen=True, kw_only=True)
class _FileRecord:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class _Entry:
    directory: Path
    key: str
    created: float
    sequence: int
    size: int
    files: tuple[_FileRecord, ...]

    def age_order(self) -> tuple[float, int]:
        return (self.created, self.sequence)

    def public(self) -> StoredEntry:
        return StoredEntry(
            key=self.key,
            created=datetime.fromtimestamp(self.created, tz=UTC),
            size=self.size,
            files=tuple(record.path for record in self.files),
        )


class LocalDirectoryStore:
    """Immutable entries in folders named by the sha256 of their key."""

    def __init__(self, root: Path, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self._clock = clock

    @property
    def name(self) -> str:
        return f"local store at {self.root}"

    def unusable(self, *, writing: bool) -> str | None:
        """Why this store cannot be used (a file where its folder goes; with ``writing``, a
        folder no entry can be written in), or None. Checked before a run spends anything."""
        root = _absolute(self.root)
        present = next(p for p in (root, *root.parents) if os.path.lexists(p))
        if not present.is_dir():
            return (
                f"{present} is a file" if present == root else f"{present} is a file, not a folder"
            )
        if not writing:
            return None
        try:
            root.mkdir(parents=True, exist_ok=True)
            probe = root / f"{_TMP_PREFIX}probe-{uuid.uuid4().hex}"
            probe.mkdir()
            probe.rmdir()
        except OSError as error:
            return f"no entry can be written there ({error.strerror or error})"
        return None

    def restore(self, keys: RestoreKeys, folder: Path) -> RestoreResult:
        problem = keys_problem(keys.all())
        if problem is not None:
            return self._miss(folder, [f"not restoring from the {self.name}: {problem}"])
        notes: list[str] = []  # corrupt entries skipped: they can never be restored anyway
        try:
            entries, notes = self._scan()
            match = _match(keys.all(), entries)
            if match is None:
                return self._miss(folder, [], notes)
            _restore_entry(match, _absolute(folder))
        except _Refused as refused:  # the matched entry holds what cannot be used
            emptied = self._miss(folder, [], notes)
            if emptied.failed:
                return emptied
            return RestoreResult.refused(refused.key, refused.reason, self.name, emptied.note)
        except OSError as error:
            return self._miss(folder, [f"restore from the {self.name} failed: {error}"], notes)
        return RestoreResult(hit=True, matched_key=match.key, note=_joined(notes))

    def save(self, key: str, folder: Path) -> SaveResult:
        problem = key_problem(key)
        if problem is not None:
            return SaveResult(saved=False, key=key, reason=f"not saved: {problem}")
        folder = _absolute(folder)
        if folder.is_symlink() or not folder.is_dir():
            return SaveResult(saved=False, key=key, reason=f"not saved: {folder} is not a folder")
        try:
            return self._save(key, folder)
        except OSError as error:
            return SaveResult(saved=False, key=key, reason=f"not saved to the {self.name}: {error}")

    def entries(self, prefix: str = "") -> list[StoredEntry]:
        """Valid entries whose key starts with ``prefix``, newest first (corrupt ones skipped)."""
        try:
            found, _ = self._scan()
        except OSError:
            return []
        matching = [entry for entry in found if entry.key.startswith(prefix)]
        matching.sort(key=_Entry.age_order, reverse=True)
        return [entry.public() for entry in matching]

    def read_entry(self, key: str) -> dict[str, str]:
        """The entry's files (relative path → text); ``KeyError`` when there is no usable entry."""
        if not os.path.lexists(self._entry_dir(key)):
            raise KeyError(f"no entry for key {key!r} in the {self.name}")
        try:
            entry = _load_entry(self._entry_dir(key))
            files = entry.directory / _FILES_DIR
            return {
                record.path: _read_recorded(files, record).decode("utf-8", errors="replace")
                for record in entry.files
            }
        except (_CorruptEntry, _NotRegular, OSError) as error:
            raise KeyError(f"no usable entry for key {key!r} in the {self.name}: {error}") from None

    # -- internals ------------------------------------------------------------------------------

    def _entry_dir(self, key: str) -> Path:
        return self.root / _entry_name(key)

    def _miss(self, folder: Path, warnings: list[str], notes: Sequence[str] = ()) -> RestoreResult:
        """A miss: ``warnings`` say why it failed (none: nothing to restore), ``notes`` the rest."""
        try:
            _empty_folder(_absolute(folder))
        except OSError as error:
            warnings = [*warnings, f"could not empty {folder}: {error}"]
        return RestoreResult.miss(warning=_joined(warnings), note=_joined(list(notes)))

    def _scan(self) -> tuple[list[_Entry], list[str]]:
        """Every valid entry, and a note for each corrupt one."""
        entries: list[_Entry] = []
        warnings: list[str] = []
        try:
            names = sorted(child.name for child in self.root.iterdir())
        except FileNotFoundError:
            return entries, warnings
        for name in names:
            if len(name) != 64 or not set(name) <= _HEX:
                continue  # the lock, the counter, saves in progress, anything else
            try:
                entries.append(_load_entry(self.root / name))
            except _CorruptEntry as error:
                warnings.append(f"ignored corrupt entry {name} in the {self.name}: {error}")
        return entries, warnings

    def _save(self, key: str, folder: Path) -> SaveResult:
        target = self._entry_dir(key)
        if os.path.lexists(target):
            return _already_exists(key)
        self.root.mkdir(parents=True, exist_ok=True)
        temp = self.root / f"{_TMP_PREFIX}{uuid.uuid4().hex}"
        temp.mkdir()
        try:
            records, skipped = _copy_tree(folder, temp / _FILES_DIR)
            size = sum(record.size for record in records)
            sequence = self._next_sequence()
            _write_entry_json(
                temp, key=key, created=self._clock(), sequence=sequence, size=size, files=records
            )
            try:
                temp.rename(target)
            except OSError:
                if os.path.lexists(target):  # a concurrent save of the same key won
                    return _already_exists(key)
                raise
        finally:
            discard_tree(temp)
        return SaveResult(saved=True, key=key, reason=_skipped_note(skipped), size_bytes=size)

    def _next_sequence(self) -> int:
        counter = self.root / ".sequence"
        with _SEQUENCE_LOCK, (self.root / ".lock").open("a+b") as lock:
            if sys.platform != "win32":
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
            try:
                last = int(counter.read_text(encoding="ascii").strip())
            except (OSError, ValueError):  # missing or damaged: continue after the newest entry
                last = max((entry.sequence for entry in self._scan()[0]), default=0)
            following = last + 1
            staged = counter.with_name(f"{_TMP_PREFIX}sequence-{uuid.uuid4().hex}")
            staged.write_text(f"{following}\n", encoding="ascii")
            staged.replace(counter)
            return following


def default_store_dir(env: Mapping[str, str]) -> Path:
    """Where the CLI keeps entries when no ``--store-dir`` is given.

    ``$MEMORY_AGENT_STORE_DIR``, else ``$XDG_DATA_HOME/memory-agent/store``, else
    ``~/.local/share/memory-agent/store``.
    """
    explicit = env.get(STORE_DIR_VARIABLE, "")
    if explicit:
        return Path(explicit)
    data_home = env.get("XDG_DATA_HOME", "")
    if data_home and Path(data_home).is_absolute():  # the XDG spec ignores relative values
        return Path(data_home) / "memory-agent" / "store"
    home = env.get("HOME", "")
    return (Path(home) if home else Path.home()) / ".local" / "share" / "memory-agent" / "store"


def _absolute(path: Path) -> Path:
    """``path`` made absolute and normalized, without following symbolic links."""
    return Path(os.path.abspath(path))  # noqa: PTH100 - Path.resolve() would follow links


# -- keys and matching ------------------------------------------------------------------------


def _entry_name(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()


def _match(keys: Iterable[str], entries: list[_Entry]) -> _Entry | None:
    """The cache's order: each key exactly, then as a prefix (newest first); first step wins."""
    for key in keys:
        exact = [entry for entry in entries if entry.key == key]
        if exact:
            return exact[0]
        prefixed = [entry for entry in entries if entry.key.startswith(key)]
        if prefixed:
            return max(prefixed, key=_Entry.age_order)
    return None


# -- entry.json -------------------------------------------------------------------------------


def _write_entry_json(
    folder: Path, *, key: str, created: float, sequence: int, size: int, files: list[_FileRecord]
) -> None:
    document = {
        "format": ENTRY_FORMAT,
        "key": key,
        "created": created,
        "sequence": sequence,
        "size": size,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in files],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (folder / _ENTRY_FILE).write_text(text, encoding="utf-8")


def _load_entry(directory: Path) -> _Entry:
    if directory.is_symlink() or not directory.is_dir():
        raise _CorruptEntry("not a folder")
    try:
        raw = (directory / _ENTRY_FILE).read_bytes()
    except FileNotFoundError:
        raise _CorruptEntry(f"{_ENTRY_FILE} is missing") from None
    except OSError as error:
        raise _CorruptEntry(f"{_ENTRY_FILE} cannot be read: {error}") from None
    try:
        document = untrusted_json.loads(raw.decode("utf-8"))
    except ValueError as error:
        raise _CorruptEntry(f"{_ENTRY_FILE} is not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise _CorruptEntry(f"{_ENTRY_FILE} is not a JSON object")
    entry = _parse_entry(directory, document)
    if _entry_name(entry.key) != directory.name:
        raise _CorruptEntry(f"{_ENTRY_FILE} names key {entry.key!r}, stored under another name")
    return entry


def _parse_entry(directory: Path, document: dict[str, Any]) -> _Entry:
    try:
        parsed = _EntryJson.model_validate(document)
    except ValidationError as error:
        raise _CorruptEntry(_first_problem(error, document)) from None
    files = tuple(_FileRecord(path=f.path, size=f.size, sha256=f.sha256) for f in parsed.files)
    if len({record.path for record in files}) != len(files):
        raise _CorruptEntry("a file is listed twice")
    if parsed.size != sum(record.size for record in files):
        raise _CorruptEntry("size does not add up to its files")
    return _Entry(
        directory=directory,
        key=parsed.key,
        created=parsed.created,
        sequence=parsed.sequence,
        size=parsed.size,
        files=files,
    )


_FIELD_PROBLEMS = {
    "key": "no valid key",
    "files": "no file list",
    "size": "no valid size",
    "sequence": "no valid sequence",
}


def _first_problem(error: ValidationError, document: dict[str, Any]) -> str:
    """What is wrong with ``entry.json``, for people: its first problem, in the order of the
    model's fields (the order a reader checks them in)."""
    found = first_error(error)
    where = found["loc"]
    if where == ("format",):
        return f"unknown format {document.get('format')!r}"
    if where == ("created",):
        typed = found["type"] in ("float_type", "missing")
        return "no valid creation time" if typed else "creation time out of range"
    if len(where) > 1 and where[0] == "files":
        return _file_problem(where[1:], document["files"])
    return _FIELD_PROBLEMS.get(str(where[0]), "not a valid entry")


def _file_problem(where: tuple[int | str, ...], files: list[Any]) -> str:
    """What is wrong with the file record at ``where`` (its index, then the field)."""
    if len(where) == 1:
        return "a file record is not an object"
    path = files[int(where[0])].get("path")
    if where[1] == "path":
        return f"unsafe file path {path!r}"
    return f"no valid checksum for {path}" if where[1] == "sha256" else f"no valid size of {path}"


def _safe_relative(path: str) -> str:
    if not _is_safe_relative(path):
        raise ValueError("not a safe relative path")
    return path


def _valid_key(key: str) -> str:
    problem = key_problem(key)
    if problem is not None:
        raise ValueError(problem)
    return key


class _FileJson(BaseModel):
    """One file of ``entry.json``; the fields in the order they are checked."""

    model_config = ConfigDict(strict=True, frozen=True)

    path: Annotated[str, AfterValidator(_safe_relative)]
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class _EntryJson(BaseModel):
    """``entry.json`` as the store reads it back (it may have been changed on disk since)."""

    model_config = ConfigDict(strict=True, frozen=True)

    format: Literal[1]
    key: Annotated[str, AfterValidator(_valid_key)]
    created: float = Field(allow_inf_nan=False, ge=0, lt=253402300800)  # before year 10000
    files: list[_FileJson]
    size: int = Field(ge=0)
    sequence: int = Field(ge=0)


def _is_safe_relative(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (
        bool(parts)
        and not PurePosixPath(path).is_absolute()
        and "\\" not in path
        and all(part not in ("..", ".") for part in parts)
        and str(PurePosixPath(*parts)) == path
    )


# -- files ------------------------------------------------------------------------------------


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file; ``_NotRegular`` for a symbolic link or a special file.

    Opened without following a final symbolic link and without blocking (a FIFO would).
    """
    if path.is_symlink():
        raise _NotRegular("symbolic link")
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        if path.is_symlink() or error.errno == errno.ELOOP:
            raise _NotRegular("symbolic link") from None
        if error.errno == errno.ENXIO:  # a socket, or a device without a driver
            raise _NotRegular("not a regular file") from None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _NotRegular("not a regular file")
        return handle.read()


def _read_recorded(files: Path, record: _FileRecord) -> bytes:
    """A stored file's bytes, checked against its record and confined to ``files``."""
    source = files.joinpath(*PurePosixPath(record.path).parts)
    real_files = os.path.realpath(files)
    if os.path.commonpath([real_files, os.path.realpath(source)]) != real_files:
        raise _CorruptEntry(f"{record.path} leads outside the entry")
    try:
        data = _read_regular(source)
    except _NotRegular as error:
        raise _CorruptEntry(f"stored file {record.path} is refused: {error}") from None
    except FileNotFoundError:
        raise _CorruptEntry(f"stored file {record.path} is missing") from None
    if len(data) != record.size or hashlib.sha256(data).hexdigest() != record.sha256:
        raise _CorruptEntry(f"stored file {record.path} does not match its size or checksum")
    return data


def _check_depth(record: _FileRecord) -> None:
    """Refuse a file deeper than a memory entry goes, before any folder of it is made."""
    depth = len(PurePosixPath(record.path).parts) - 1
    if depth > MAX_TREE_DEPTH:
        raise _CorruptEntry(
            f"stored file {record.path[:40]}… is {depth} folders deep, more than the "
            f"{MAX_TREE_DEPTH} allowed"
        )


def _copy_tree(source: Path, destination: Path) -> tuple[list[_FileRecord], list[str]]:
    """Copy the regular files under ``source``; return their records and what was skipped."""
    records: list[_FileRecord] = []
    skipped: list[str] = []
    destination.mkdir()
    pending = [PurePosixPath()]
    while pending:
        relative_dir = pending.pop()
        with os.scandir(source.joinpath(*relative_dir.parts)) as listing:
            children = sorted(listing, key=lambda child: child.name)
        for child in children:
            relative = relative_dir / child.name
            if child.is_dir(follow_symlinks=False):
                pending.append(relative)
                continue
            try:
                data = _read_regular(Path(child.path))
            except _NotRegular as error:
                skipped.append(f"{relative} ({error})")
                continue
            target = destination.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            records.append(
                _FileRecord(
                    path=str(relative), size=len(data), sha256=hashlib.sha256(data).hexdigest()
                )
            )
    records.sort(key=lambda record: record.path)
    return records, skipped


def _restore_entry(entry: _Entry, folder: Path) -> None:
    """Copy the entry into a staging folder next to ``folder``, then swap it in."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise OSError(f"{folder} is not a folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.restore-{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        files = entry.directory / _FILES_DIR
        for record in entry.files:
            _check_depth(record)
            target = staging.joinpath(*PurePosixPath(record.path).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_read_recorded(files, record))
        _swap_in(staging, folder)
    except (_CorruptEntry, _NotRegular) as error:
        raise _Refused(entry.key, str(error)) from None
    finally:
        discard_tree(staging)


def _swap_in(staging: Path, folder: Path) -> None:
    if not folder.exists():
        staging.rename(folder)
        return
    staging.chmod(stat.S_IMODE(folder.stat().st_mode))
    old = folder.parent / f".{folder.name}.old-{uuid.uuid4().hex}"
    try:
        folder.rename(old)
    except OSError:  # the folder cannot move (a mount point, say): swap its contents instead
        _empty_folder(folder)
        for child in staging.iterdir():
            child.rename(folder / child.name)
        return
    try:
        staging.rename(folder)
    except OSError:
        old.rename(folder)
        raise
    discard_tree(old)


def _empty_folder(folder: Path) -> None:
    """Make ``folder`` existing and empty (symbolic links in it are removed, not followed)."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise OSError(f"{folder} is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    for child in folder.iterdir():
        remove_tree(child)


# -- messages ---------------------------------------------------------------------------------


def _already_exists(key: str) -> SaveResult:
    return SaveResult(
        saved=False, key=key, reason=f"already exists: entry {key!r} is immutable and was kept"
    )


def _skipped_note(skipped: list[str]) -> str:
    if not skipped:
        return ""
    return f"skipped {len(skipped)} path(s) that are not regular files: {', '.join(skipped)}"


def _joined(warnings: list[str]) -> str | None:
    return "; ".join(warnings) or None
