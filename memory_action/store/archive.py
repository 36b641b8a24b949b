"""The cache archive: a pax tar of the memory folder, zstd- or gzip-compressed.

Byte-compatible with ``@actions/cache`` (``actions-cache-protocol.md`` §5, §6): GNU tar
extracts what :func:`create_archive` writes the way the JS client runs it (``tar -xf cache.tzst
-P -C $GITHUB_WORKSPACE --use-compress-program unzstd``), and :func:`extract_archive` reads what
the JS client's ``tar --posix -cf ... --use-compress-program zstdmt`` (or ``-z``) wrote.

A restored archive is untrusted input. :func:`extract_archive` writes only regular files and
directories under the memory folder, refuses anything else that looks hostile (absolute names,
``..``, links, devices, corrupt or truncated data, more than :class:`ArchiveLimits` allows), and
is all-or-nothing: it builds the tree in a staging directory and swaps it in only when complete.
"""

from __future__ import annotations

import enum
import grp
import gzip
import hashlib
import io
import logging
import math
import os
import pwd
import re
import secrets
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

import zstandard

from memory_action.errors import CacheError
from memory_action.safety.trees import MAX_TREE_DEPTH, discard_tree, walk_tree

_log = logging.getLogger(__name__)

_VERSION_SALT = "1.0"  # `versionSalt` in @actions/cache lib/internal/cacheUtils.js
_ZSTD_LEVEL = 3  # what `zstdmt` uses
_WINDOW_WITHOUT_LONG = 2**27  # the `unzstd` limit without --long (§6.4)
_WINDOW_LEGACY_LONG = 2**31  # `unzstd --long=30` and anything up to --long=31
# zstd can expand ~32000:1, so small input chunks keep one decompress call's output small
# (512 B in → at most ~16 MiB out) even for a bomb.
_INPUT_CHUNK = 512
_COPY_CHUNK = 64 * 1024
# Room for tar headers, pax records and padding on top of the file data, per member.
_HEADER_ALLOWANCE = 8 * 1024
_TRAILER_ALLOWANCE = 1024 * 1024
# How much recently decompressed data to keep to check what follows the last member.
_RECENT_BYTES = 64 * 1024
_MiB = 1024 * 1024
_PAX_TIME = re.compile(r"-?[0-9]{1,20}(?:\.[0-9]{1,9})?")  # what GNU tar writes; never huge


class Compression(enum.StrEnum):
    """The compression token of the cache version, and the archive format it implies."""

    ZSTD_WITHOUT_LONG = "zstd-without-long"
    GZIP = "gzip"
    ZSTD = "zstd"  # legacy `--long=30`; only ever read


class ArchiveError(CacheError):
    """The archive is corrupt, truncated, malicious or too large, or cannot be written."""


@dataclass(frozen=True, kw_only=True)
class ArchiveLimits:
    """What one restore may unpack: file data in total, per file, the number of members, and
    how many folders deep below the memory folder (a deeper tree is refused before any of it is
    written: Python 3.11 recurses once per level to walk or remove it)."""

    max_total_bytes: int = 64 * _MiB
    max_file_bytes: int = 8 * _MiB
    max_members: int = 10_000
    max_depth: int = MAX_TREE_DEPTH

    @property
    def max_stream_bytes(self) -> int:
        """The most decompressed bytes (file data plus tar overhead) read before giving up."""
        return (
            self.max_total_bytes + (self.max_members + 1) * _HEADER_ALLOWANCE + _TRAILER_ALLOWANCE
        )


def cache_version(paths: Sequence[str], compression: Compression | None) -> str:
    """The ``version`` the JS client sends for these ``path:`` strings (§5.1).

    Never adds ``windows-only``: this client runs on Linux.
    """
    if isinstance(paths, str):  # a str is a Sequence[str] too, and would hash its characters
        raise TypeError("paths must be a sequence of path strings, not one string")
    components = list(paths)
    if compression is not None:
        components.append(compression.value)
    components.append(_VERSION_SALT)
    return hashlib.sha256("|".join(components).encode("utf-8")).hexdigest()


def _folder_parts(folder: PurePosixPath) -> tuple[str, ...]:
    parts = folder.parts
    if not parts or folder.is_absolute() or ".." in parts:
        raise ArchiveError(
            f"memory folder {str(folder)!r} must be a relative path inside the workspace"
        )
    return parts


def _refuse_linked_parents(path: Path, depth: int) -> None:
    """Refuse when one of the ``depth`` directories above ``path`` is a symlink.

    They are the folder's own leading components (``a`` for ``a/b``), which the checkout may
    have made a link to anywhere; following it would write or delete outside the workspace.
    """
    for parent in list(path.parents)[:depth]:
        if parent.is_symlink():
            raise ArchiveError(f"{parent} is a symbolic link; refusing to follow it")


# --- create ------------------------------------------------------------------------------------


def create_archive(
    workspace: Path,
    folder: PurePosixPath,
    dest: Path,
    compression: Compression = Compression.ZSTD_WITHOUT_LONG,
) -> int:
    """Write ``workspace/folder`` to ``dest`` as the JS client would; return ``dest``'s size.

    Member names are relative to ``workspace`` (``.agent-memory/AGENTS.md``), directories come
    before their contents, and only directories and regular files are stored: symlinks and
    special files are skipped and never followed, hard links are stored as plain files.
    """
    parts = _folder_parts(folder)
    root = workspace.joinpath(*parts)
    _refuse_linked_parents(root, len(parts) - 1)
    try:
        root_is_dir = stat.S_ISDIR(os.lstat(root).st_mode)
    except OSError:
        root_is_dir = False
    if not root_is_dir:
        raise ArchiveError(f"{str(folder)!r} is not a directory in the workspace")
    try:
        with ExitStack() as stack:
            raw = stack.enter_context(dest.open("wb"))
            out = _compressing_writer(stack, raw, compression)
            tar = stack.enter_context(
                tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT, encoding="utf-8")
            )
            _Packer(tar, skip=os.fstat(raw.fileno())).add_dir(root, "/".join(parts))
        return dest.stat().st_size
    except (OSError, ValueError, tarfile.TarError, zstandard.ZstdError) as exc:
        with suppress(OSError):
            dest.unlink(missing_ok=True)
        raise ArchiveError(f"cannot archive {str(folder)!r}: {exc}") from exc


def _compressing_writer(
    stack: ExitStack, raw: BinaryIO, compression: Compression
) -> gzip.GzipFile | zstandard.ZstdCompressionWriter:
    if compression is Compression.GZIP:
        # No file name and a fixed mtime in the gzip header, as when tar pipes through gzip.
        return stack.enter_context(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0))
    # Streamed, so the frame has no content size and the window stays at the level-3 default
    # (2 MiB), far below the 2^27 `unzstd` accepts without --long.
    cctx = zstandard.ZstdCompressor(level=_ZSTD_LEVEL, write_checksum=True)
    return stack.enter_context(cctx.stream_writer(raw, closefd=False))


class _Packer:
    """Adds a directory tree to a tar the way GNU tar --posix lays it out."""

    def __init__(self, tar: tarfile.TarFile, skip: os.stat_result) -> None:
        self._tar = tar
        self._skip = (skip.st_dev, skip.st_ino)  # the archive itself, like --exclude cache.tzst
        self._users: dict[int, str] = {}
        self._groups: dict[int, str] = {}

    def add_dir(self, path: Path, name: str) -> None:
        self._tar.addfile(self._info(name, os.lstat(path), tarfile.DIRTYPE))
        with os.scandir(path) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in entries:
            child = f"{name}/{entry.name}"
            st = entry.stat(follow_symlinks=False)
            if (st.st_dev, st.st_ino) == self._skip:
                continue
            if stat.S_ISDIR(st.st_mode):
                self.add_dir(Path(entry.path), child)
            elif stat.S_ISREG(st.st_mode):
                self._add_file(Path(entry.path), child)
            else:
                _log.debug("not archived (neither a file nor a directory): %s", child)

    def _add_file(self, path: Path, name: str) -> None:
        # O_NOFOLLOW/O_NONBLOCK: the entry may have been swapped for a link or fifo since lstat.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as src:
            st = os.fstat(src.fileno())  # size and mode of what is actually read
            if not stat.S_ISREG(st.st_mode):
                _log.debug("not archived (no longer a regular file): %s", name)
                return
            self._tar.addfile(self._info(name, st, tarfile.REGTYPE), src)

    def _info(self, name: str, st: os.stat_result, kind: bytes) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)  # tarfile appends the '/' GNU tar writes for directories
        info.type = kind
        info.mode = stat.S_IMODE(st.st_mode)
        info.size = st.st_size if kind == tarfile.REGTYPE else 0
        info.uid, info.gid = st.st_uid, st.st_gid
        info.uname = _name_of(self._users, st.st_uid, lambda i: pwd.getpwuid(i).pw_name)
        info.gname = _name_of(self._groups, st.st_gid, lambda i: grp.getgrgid(i).gr_name)
        seconds, nanos = divmod(st.st_mtime_ns, 1_000_000_000)
        info.mtime = seconds
        # Sub-second mtime in the pax record, as GNU tar --posix writes it.
        info.pax_headers = {"mtime": f"{seconds}.{nanos:09d}"}
        return info


def _name_of(cache: dict[int, str], ident: int, lookup: Callable[[int], str]) -> str:
    if ident not in cache:
        try:
            cache[ident] = lookup(ident)
        except KeyError:  # e.g. the runner's uid inside a container; GNU tar reads an empty name
            cache[ident] = ""
    return cache[ident]


# --- decompress --------------------------------------------------------------------------------


class _Decoder(Protocol):
    def decompress(self, data: bytes) -> bytes: ...

    def finish(self) -> None:
        """Raise ArchiveError unless the input ended exactly at the end of a frame/member."""


class _ZstdDecoder:
    """zstd frames one after another, each checked to be complete (checksum included).

    ``stream_reader`` returns a short read instead of an error on truncated input, so each frame
    gets its own ``decompressobj``, whose ``eof`` says whether libzstd saw the frame end.
    """

    def __init__(self, max_window_size: int) -> None:
        self._dctx = zstandard.ZstdDecompressor(max_window_size=max_window_size)
        self._frame: zstandard.ZstdDecompressionObj | None = None
        self._frames = 0

    def decompress(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            out.append(self._frame.decompress(data))
            if not self._frame.eof:
                break
            data = self._frame.unused_data
            self._frame = None
            self._frames += 1
        return b"".join(out)

    def finish(self) -> None:
        if self._frame is not None or self._frames == 0:
            raise ArchiveError("the zstd data is truncated (the last frame is incomplete)")


class _GzipDecoder:
    """gzip members one after another, each checked to be complete (CRC and length)."""

    def __init__(self) -> None:
        self._member: zlib._Decompress | None = None
        self._members = 0

    def decompress(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._member is None:
                self._member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            out.append(self._member.decompress(data))
            if not self._member.eof:
                break
            data = self._member.unused_data
            self._member = None
            self._members += 1
        return b"".join(out)

    def finish(self) -> None:
        if self._member is not None or self._members == 0:
            raise ArchiveError("the gzip data is truncated (the stream is incomplete)")


def _decoder(compression: Compression) -> _Decoder:
    if compression is Compression.GZIP:
        return _GzipDecoder()
    if compression is Compression.ZSTD:
        return _ZstdDecoder(_WINDOW_LEGACY_LONG)
    return _ZstdDecoder(_WINDOW_WITHOUT_LONG)


class _DecodedStream(io.RawIOBase):
    """The decompressed tar stream, with a hard cap on how much may come out of it."""

    def __init__(self, source: BinaryIO, decoder: _Decoder, budget: int) -> None:
        super().__init__()
        self._source = source
        self._decoder = decoder
        self._budget = budget
        self._produced = 0
        self._pending = memoryview(b"")
        self._at_end = False
        self.position = 0  # bytes handed out so far
        self._recent = bytearray()  # the last _RECENT_BYTES handed out

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending and not self._at_end:
            chunk = self._source.read(_INPUT_CHUNK)
            if not chunk:
                self._decoder.finish()
                self._at_end = True
                break
            out = self._decoder.decompress(chunk)
            self._produced += len(out)
            if self._produced > self._budget:
                raise ArchiveError(
                    f"the archive decompresses to more than {self._budget} bytes; refused"
                )
            self._pending = memoryview(out)
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._recent += self._pending[:count]
        if len(self._recent) > 2 * _RECENT_BYTES:  # trimmed now and then, not on every read
            del self._recent[:-_RECENT_BYTES]
        self._pending = self._pending[count:]
        self.position += count
        return count

    def recent_since(self, offset: int) -> bytes:
        """The bytes already handed out from ``offset`` on (tarfile reads ahead of members)."""
        count = self.position - offset
        if count < 0 or count > len(self._recent):
            raise ArchiveError("cannot check the end of the tar stream")
        return bytes(self._recent[len(self._recent) - count :])


# --- extract -----------------------------------------------------------------------------------


def extract_archive(
    archive: Path,
    compression: Compression,
    folder: PurePosixPath,
    target: Path,
    limits: ArchiveLimits = ArchiveLimits(),  # frozen, so one shared default is safe
) -> list[str]:
    """Extract the members under ``folder`` into ``target`` (= ``workspace/folder``).

    All or nothing: on any error ``target`` is left as it was and ArchiveError is raised. On
    success ``target`` is replaced by the archive's tree. Members outside ``folder`` are
    skipped (logged at debug level). Returns the extracted entries relative to ``target``, in
    archive order, as POSIX paths; directories end with ``/``.
    """
    parts = _folder_parts(folder)
    _refuse_linked_parents(target, len(parts) - 1)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # A sibling of target, so the final rename stays on one filesystem.
        staging = Path(
            tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".restore", dir=target.parent)
        )
    except OSError as exc:
        raise ArchiveError(f"cannot prepare {target}: {exc}") from exc
    try:
        with archive.open("rb") as source:
            stream = _DecodedStream(source, _decoder(compression), limits.max_stream_bytes)
            extracted = _Unpacker(staging, parts, limits).run(stream)
        _swap_in(staging, target)
    except ArchiveError:
        discard_tree(staging)
        raise
    except (
        OSError,
        EOFError,
        ValueError,
        tarfile.TarError,
        zstandard.ZstdError,
        zlib.error,
    ) as exc:
        discard_tree(staging)
        raise ArchiveError(f"cannot extract the cache archive: {exc}") from exc
    except BaseException:
        discard_tree(staging)
        raise
    return extracted


class _Unpacker:
    """Checks each member and writes the accepted ones under a fresh staging directory."""

    def __init__(self, staging: Path, folder: tuple[str, ...], limits: ArchiveLimits) -> None:
        self._staging = staging
        self._folder = folder
        self._limits = limits
        self._kinds: dict[tuple[str, ...], str] = {(): "dir"}  # what each path already is
        # Directory modes and mtimes are applied last: writing into a directory changes its
        # mtime, and a read-only mode would stop the writes.
        self._dirs: dict[tuple[str, ...], tuple[int, int | None]] = {(): (0o755, None)}
        self._extracted: list[str] = []
        self._skipped: list[str] = []
        self._members = 0
        self._total = 0
        self._saw_folder = False

    def run(self, stream: _DecodedStream) -> list[str]:
        with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8") as tar:
            while (member := tar.next()) is not None:
                self._member(tar, member)
            _check_end(stream, tar.offset)
        if not self._saw_folder:
            raise ArchiveError(f"the archive holds nothing under {'/'.join(self._folder)}/")
        if self._skipped:
            _log.debug(
                "skipped %d archive member(s) outside %s: %s",
                len(self._skipped),
                "/".join(self._folder),
                ", ".join(self._skipped[:50]),
            )
        for rel in sorted(self._dirs, key=len, reverse=True):
            mode, mtime_ns = self._dirs[rel]
            self._path(rel).chmod(mode)
            if mtime_ns is not None:
                _set_mtime(self._path(rel), mtime_ns)
        return self._extracted

    def _member(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        self._count(member)
        parts = _safe_parts(member.name)
        depth = len(self._folder)
        if parts[:depth] != self._folder:
            self._skipped.append(member.name)
            return
        self._saw_folder = True
        rel = parts[depth:]
        kind = _kind_of(member)
        folders = len(rel) if kind == "dir" else len(rel) - 1
        if folders > self._limits.max_depth:
            raise ArchiveError(
                f"archive member {_shortened(member.name)!r} is {folders} folders deep below "
                f"{'/'.join(self._folder)}/, more than the {self._limits.max_depth} allowed"
            )
        # A second opinion from the stdlib's own filter; it also gives the sanitised file mode.
        filtered = tarfile.data_filter(member, str(self._staging))
        if kind == "dir":
            self._make_dirs(rel, member.name)
            self._dirs[rel] = (_dir_mode(member.mode), _mtime_ns(member))
            if rel:  # the folder itself is target, not an entry in it
                self._extracted.append("/".join(rel) + "/")
            return
        if not rel or self._kinds.get(rel, "file") != "file":
            raise ArchiveError(
                f"{_shortened(member.name)!r} is a file where a directory is expected"
            )
        if member.size > self._limits.max_file_bytes:
            raise ArchiveError(
                f"{_shortened(member.name)!r} has {member.size} bytes, more than the "
                f"{self._limits.max_file_bytes} allowed per file"
            )
        self._make_dirs(rel[:-1], member.name)
        self._kinds[rel] = "file"
        mode = 0o644 if filtered.mode is None else filtered.mode
        self._write_file(tar, member, self._path(rel), mode)
        self._extracted.append("/".join(rel))

    def _count(self, member: tarfile.TarInfo) -> None:
        # Every member counts, skipped ones too: their data is decompressed all the same.
        self._members += 1
        if self._members > self._limits.max_members:
            raise ArchiveError(f"the archive has more than {self._limits.max_members} members")
        self._total += max(member.size, 0)
        if self._total > self._limits.max_total_bytes:
            raise ArchiveError(
                f"the archive holds more than {self._limits.max_total_bytes} bytes of data"
            )

    def _path(self, rel: tuple[str, ...]) -> Path:
        return self._staging.joinpath(*rel)

    def _make_dirs(self, rel: tuple[str, ...], name: str) -> None:
        for end in range(1, len(rel) + 1):
            prefix = rel[:end]
            known = self._kinds.get(prefix)
            if known == "file":
                raise ArchiveError(
                    f"{_shortened(name)!r} needs a directory where the archive has a file"
                )
            if known is None:
                self._path(prefix).mkdir()
                self._kinds[prefix] = "dir"

    def _write_file(
        self, tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path, mode: int
    ) -> None:
        source = tar.extractfile(member)
        if source is None:  # cannot happen for a regular file; keeps the types honest
            raise ArchiveError(f"cannot read {_shortened(member.name)!r}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        with source, os.fdopen(os.open(path, flags, 0o600), "wb") as out:
            remaining = member.size
            while remaining > 0:
                chunk = source.read(min(_COPY_CHUNK, remaining))
                if not chunk:
                    raise ArchiveError(f"{_shortened(member.name)!r} is truncated")
                out.write(chunk)
                remaining -= len(chunk)
            os.fchmod(out.fileno(), mode)
        _set_mtime(path, _mtime_ns(member))


def _shortened(name: str, keep: int = 80) -> str:
    """A member name fit for a one-line message (an attacker's can be kilobytes long)."""
    return name if len(name) <= keep else f"{name[: keep // 2]}…{name[-keep // 2 :]}"


def _safe_parts(name: str) -> tuple[str, ...]:
    """The member name as path components; ArchiveError for anything that could escape."""
    if "\x00" in name:
        raise ArchiveError(f"archive member name {_shortened(name)!r} contains a NUL byte")
    if name.startswith("/"):
        raise ArchiveError(f"archive member {_shortened(name)!r} has an absolute name")
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"archive member {_shortened(name)!r} contains '..'")
    return parts


def _kind_of(member: tarfile.TarInfo) -> str:
    if member.isdir():
        return "dir"
    if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
        if member.sparse is not None:
            raise ArchiveError(
                f"archive member {_shortened(member.name)!r} is a sparse file; refused"
            )
        return "file"
    what = {
        tarfile.SYMTYPE: "a symbolic link",
        tarfile.LNKTYPE: "a hard link",
        tarfile.CHRTYPE: "a character device",
        tarfile.BLKTYPE: "a block device",
        tarfile.FIFOTYPE: "a fifo",
    }.get(member.type, f"of type {member.type!r}")
    raise ArchiveError(
        f"archive member {_shortened(member.name)!r} is {what}; only files and directories"
    )


def _dir_mode(mode: int) -> int:
    # Like data_filter for files: no setuid/sticky bits, no group/other write; owner has rwx.
    return (mode & 0o755) | 0o700


def _mtime_ns(member: tarfile.TarInfo) -> int | None:
    """The member's mtime in nanoseconds, exact when a pax record has it (a float is not)."""
    text = member.pax_headers.get("mtime")
    if text is not None and _PAX_TIME.fullmatch(text):
        return int(Decimal(text) * 1_000_000_000)
    if not math.isfinite(member.mtime) or abs(member.mtime) > 2**62 / 1e9:
        return None  # nonsense from the archive: leave the time of extraction
    return int(member.mtime * 1_000_000_000)


def _set_mtime(path: Path, mtime_ns: int | None) -> None:
    if mtime_ns is None:
        return
    try:
        os.utime(path, ns=(mtime_ns, mtime_ns), follow_symlinks=False)
    except (OverflowError, ValueError, OSError):
        _log.debug("could not set the mtime of %s", path)  # the content is what matters


def _check_end(stream: _DecodedStream, end_of_members: int) -> None:
    """Require zero blocks after the last member, up to the end of the compressed stream.

    tarfile reads a truncated or garbled header after the first member as the end of the
    archive; demanding the end-of-archive zeros turns that into an error, and reading to the
    end makes the decoder verify the last frame's checksum.
    """
    zeros = 0
    chunk = stream.recent_since(end_of_members)
    while chunk:
        if chunk.count(0) != len(chunk):
            raise ArchiveError("the tar stream has data after its last member; refused")
        zeros += len(chunk)
        chunk = stream.read(_COPY_CHUNK) or b""
    if zeros < tarfile.BLOCKSIZE:
        raise ArchiveError("the tar stream is truncated (no end-of-archive marker)")


def _swap_in(staging: Path, target: Path) -> None:
    if not os.path.lexists(target):
        staging.rename(target)
        return
    old = target.with_name(f".{target.name}.old-{secrets.token_hex(6)}")
    target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        old.rename(target)
        raise
    discard_tree(old)


# --- ownership ---------------------------------------------------------------------------------


def fix_ownership(path: Path, like: Path) -> None:
    """Give ``path`` and everything under it the owner of ``like`` (§6.6).

    A Docker action runs as root, so what it extracts belongs to root, and later steps running as
    the runner user could not replace it. Does nothing unless we are root; never follows links.
    """
    if os.geteuid() != 0:
        return
    try:
        owner = like.stat()
    except OSError:
        return
    for item in walk_tree(path):
        try:
            st = os.lstat(item)
            if (st.st_uid, st.st_gid) != (owner.st_uid, owner.st_gid):
                os.chown(item, owner.st_uid, owner.st_gid, follow_symlinks=False)
        except OSError as exc:
            _log.debug("could not chown %s: %s", item, exc)
