"""The cache archive: version strings, tar layout, GNU tar interop and hostile archives."""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import shutil
import stat
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest
import zstandard

from memory_action.errors import CacheError
from memory_action.store import archive
from memory_action.store.archive import (
    ArchiveError,
    ArchiveLimits,
    Compression,
    cache_version,
    create_archive,
    extract_archive,
    fix_ownership,
)

MEMORY = PurePosixPath(".agent-memory")
ZWL = Compression.ZSTD_WITHOUT_LONG
MiB = 1024 * 1024
# Fixed mtimes with a sub-second part, so pax mtime records are exercised.
MTIME_NS = 1_764_421_740_123_456_789

# --- helpers -----------------------------------------------------------------------------------


def make_tree(root: Path, spec: dict[str, bytes | None]) -> None:
    """Create files (bytes) and directories (None) under root, with fixed mtimes."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in spec.items():
        path = root / rel
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            path.chmod(0o644)
    for path in sorted((root, *root.rglob("*")), key=lambda p: len(p.parts), reverse=True):
        os.utime(path, ns=(MTIME_NS, MTIME_NS), follow_symlinks=False)


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Everything that must survive a round trip: kinds, contents, modes, file mtimes."""
    out: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        if stat.S_ISDIR(st.st_mode):
            out[rel] = ("dir", stat.S_IMODE(st.st_mode))
        else:
            assert stat.S_ISREG(st.st_mode), rel
            out[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    return out


SAMPLE: dict[str, bytes | None] = {
    "AGENTS.md": b"# Memory\n- prefers small PRs\n",
    "notes/AGENTS.md": b"n\n",
    "notes/deeper/still/x.md": b"deep",
    "notes/empty.md": b"",
    "empty-dir": None,
    "caf\u00e9/\u65e5\u672c\u8a9e-\U0001f600.md": "unicode \u2713\n".encode(),
    "binary.bin": bytes(range(256)) * 40,
    "big.bin": bytes(range(256)) * 1200,  # 300 KiB: more than tarfile reads ahead
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    make_tree(ws / MEMORY, SAMPLE)
    (ws / MEMORY / "run.sh").write_bytes(b"#!/bin/sh\n")
    (ws / MEMORY / "run.sh").chmod(0o755)
    os.utime(ws / MEMORY / "run.sh", ns=(MTIME_NS, MTIME_NS))
    os.utime(ws / MEMORY, ns=(MTIME_NS, MTIME_NS))
    return ws


def info(
    name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, **attrs: object
) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.size = size
    member.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    member.mtime = MTIME_NS // 1_000_000_000
    for key, value in attrs.items():
        setattr(member, key, value)
    return member


Entry = tuple[tarfile.TarInfo, bytes | None]


def file_entry(name: str, data: bytes = b"x") -> Entry:
    return info(name, size=len(data)), data


def dir_entry(name: str) -> Entry:
    return info(name, tarfile.DIRTYPE), None


def tar_bytes(entries: list[Entry]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in entries:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def zstd_stream(data: bytes) -> bytes:
    """Compressed like zstdmt in a pipe: no content size in the frame header."""
    buf = io.BytesIO()
    with zstandard.ZstdCompressor(level=3, write_checksum=True).stream_writer(
        buf, closefd=False
    ) as writer:
        writer.write(data)
    return buf.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def good_entries() -> list[Entry]:
    return [
        dir_entry(".agent-memory"),
        file_entry(".agent-memory/AGENTS.md", b"# memory\n"),
        dir_entry(".agent-memory/notes"),
        file_entry(".agent-memory/notes/a.md", b"a" * 3000),
    ]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """An existing memory folder that a failed restore must leave exactly as it is."""
    folder = tmp_path / "restore-ws" / ".agent-memory"
    folder.mkdir(parents=True)
    (folder / "old.md").write_text("old memory\n")
    return folder


def assert_untouched(target: Path) -> None:
    assert [p.name for p in target.iterdir()] == ["old.md"]
    assert (target / "old.md").read_text() == "old memory\n"
    assert [p.name for p in target.parent.iterdir()] == [target.name], "staging left behind"


def write(tmp_path: Path, data: bytes, name: str = "cache.tzst") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- version (§5.2, §10) -----------------------------------------------------------------------

# The spec's test vectors hash the path `actions/cache` sees on a GitHub-hosted runner for a
# repository "r" (not a path of any machine these tests run on): the strings must match exactly.
RUNNER_PATH = "/home/runner/work/r/r/.agent-memory"


@pytest.mark.parametrize(
    ("paths", "compression", "expected"),
    [
        (
            [RUNNER_PATH],
            Compression.ZSTD_WITHOUT_LONG,
            "3ca86a8cd7d9e4af9fdcedef9e2a07c04fa6776ceab99f466e592235a461e8e2",
        ),
        (
            [RUNNER_PATH],
            Compression.ZSTD,
            "528828064cd15dccd3d0c78522aba712f8acdae309d02a8feae520c944fa77b2",
        ),
        (
            [RUNNER_PATH],
            Compression.GZIP,
            "787786bfbeddeabc523316a54edad2d8b1534f6e638f8f9c5690514bb282482b",
        ),
        ([RUNNER_PATH], None, "3a636fbc569757cf8608a8fd20dbc71d7adea224bee187f8bc01bb931d98a79c"),
        (
            [".agent-memory"],
            Compression.ZSTD_WITHOUT_LONG,
            "83cd1addde378565c03b689736f1fb41bf3e741a39a3e1ad0f69f91e3171d69b",
        ),
        (
            [".agent-memory"],
            Compression.GZIP,
            "b7df0e870a8b5d61ad4729ab04a35b7b14e7f66141d37bd814ef48e9e6241833",
        ),
        (
            [".agent-memory", "AGENTS.md"],
            Compression.ZSTD_WITHOUT_LONG,
            "42fff31e7352e0e0829f67a422eb38f9eb32f23a4acce66b2c884eac2198d5ac",
        ),
        (
            ["AGENTS.md", ".agent-memory"],
            Compression.ZSTD_WITHOUT_LONG,
            "77967fc88dc182ed96924d700e10bc7ef2f2cc42a1e26efe42365f724ac2a0dd",
        ),
        (
            ["/github/workspace/.agent-memory"],
            Compression.ZSTD_WITHOUT_LONG,
            "515d229491d0aaa4d61e0a6216530c33e924a2bdaf08d0f28f7c44e134a05015",
        ),
    ],
)
def test_cache_version_matches_the_js_client(
    paths: list[str], compression: Compression | None, expected: str
) -> None:
    assert cache_version(paths, compression) == expected
    assert cache_version(tuple(paths), compression) == expected


def test_cache_version_hashes_the_documented_string() -> None:
    text = f"{RUNNER_PATH}|zstd-without-long|1.0"
    assert cache_version([RUNNER_PATH], ZWL) == hashlib.sha256(text.encode()).hexdigest()


def test_cache_version_never_adds_windows_only() -> None:
    # The §5.2 row "zstd-without-long + windows-only" is the formula on Windows only.
    windows = "4f23c5dde240097d0316c75e4ef3d639e8885e2e00e0421be703f1efce067cf7"
    text = f"{RUNNER_PATH}|zstd-without-long|windows-only|1.0"
    assert hashlib.sha256(text.encode()).hexdigest() == windows
    assert cache_version([RUNNER_PATH], ZWL) != windows


def test_cache_version_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError):
        cache_version(".agent-memory", ZWL)


def test_compression_tokens() -> None:
    assert [c.value for c in Compression] == ["zstd-without-long", "gzip", "zstd"]
    assert Compression("zstd-without-long") is ZWL
    assert issubclass(ArchiveError, CacheError)


# --- create ------------------------------------------------------------------------------------


def test_create_writes_the_layout_gnu_tar_writes(workspace: Path, tmp_path: Path) -> None:
    dest = tmp_path / "cache.tzst"
    size = create_archive(workspace, MEMORY, dest)
    assert size == dest.stat().st_size > 0

    frame = zstandard.get_frame_parameters(dest.read_bytes())
    assert frame.window_size <= 2**27  # readable by `unzstd` without --long
    assert frame.content_size == zstandard.CONTENTSIZE_UNKNOWN  # streamed, like zstdmt
    assert frame.has_checksum

    raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(dest.read_bytes())).read()
    assert raw[257:265] == b"ustar\x0000"
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names[0] == ".agent-memory"
    assert all(not n.startswith(("./", "/")) and ".." not in n.split("/") for n in names)
    assert all(m.isdir() or m.isreg() for m in members)
    for i, name in enumerate(names):  # every directory comes before what is in it
        parent = name.rpartition("/")[0]
        if parent:
            assert parent in names[:i]
    by_name = {m.name: m for m in members}
    assert set(by_name) == {f".agent-memory/{rel}" for rel in [*SAMPLE, "run.sh", "notes"]} | {
        ".agent-memory",
        ".agent-memory/notes/deeper",
        ".agent-memory/notes/deeper/still",
        ".agent-memory/caf\u00e9",
    }
    agents = by_name[".agent-memory/AGENTS.md"]
    assert agents.mode == 0o644
    assert agents.pax_headers["mtime"] == "1764421740.123456789"
    assert agents.size == len(SAMPLE["AGENTS.md"] or b"")
    assert by_name[".agent-memory/run.sh"].mode == 0o755
    # tarfile strips it when reading; GNU tar writes directory names with a trailing slash.
    assert b".agent-memory/notes/\x00" in raw


def test_create_gzip(workspace: Path, tmp_path: Path) -> None:
    dest = tmp_path / "cache.tgz"
    size = create_archive(workspace, MEMORY, dest, Compression.GZIP)
    data = dest.read_bytes()
    assert size == len(data)
    assert data[:2] == b"\x1f\x8b"
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        assert ".agent-memory/AGENTS.md" in tar.getnames()


def test_create_skips_links_and_specials_and_stores_hard_links_as_files(
    workspace: Path, tmp_path: Path
) -> None:
    memory = workspace / MEMORY
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (memory / "link-out").symlink_to(outside)
    (memory / "link-dir").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(memory / "fifo")
    os.link(memory / "AGENTS.md", memory / "hard.md")
    dest = tmp_path / "cache.tzst"
    create_archive(workspace, MEMORY, dest)

    out = tmp_path / "out" / ".agent-memory"
    extracted = extract_archive(dest, ZWL, MEMORY, out)
    assert "link-out" not in extracted
    assert "link-dir/" not in extracted
    assert "fifo" not in extracted
    assert (out / "hard.md").read_bytes() == SAMPLE["AGENTS.md"]
    assert not any(p.is_symlink() for p in out.rglob("*"))


def test_create_leaves_out_the_archive_itself(workspace: Path, tmp_path: Path) -> None:
    dest = workspace / MEMORY / "cache.tzst"
    create_archive(workspace, MEMORY, dest)
    out = tmp_path / "out" / ".agent-memory"
    assert "cache.tzst" not in extract_archive(dest, ZWL, MEMORY, out)


@pytest.mark.parametrize("folder", ["missing", "file.txt", "link", "..", ".", "/abs", "a/../b"])
def test_create_refuses_a_folder_that_is_not_a_workspace_directory(
    workspace: Path, tmp_path: Path, folder: str
) -> None:
    (workspace / "file.txt").write_text("x")
    (workspace / "link").symlink_to(workspace / MEMORY)
    dest = tmp_path / "cache.tzst"
    with pytest.raises(ArchiveError):
        create_archive(workspace, PurePosixPath(folder), dest)
    assert not dest.exists()


def test_create_removes_a_partial_archive_on_error(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unreadable = workspace / MEMORY / "notes" / "AGENTS.md"

    def failing_open(path: object, flags: int, *args: object) -> int:
        if Path(str(path)) == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    real_open = os.open
    monkeypatch.setattr(os, "open", failing_open)
    dest = tmp_path / "cache.tzst"
    with pytest.raises(ArchiveError, match="Permission denied"):
        create_archive(workspace, MEMORY, dest)
    assert not dest.exists()


def test_create_refuses_a_folder_below_a_symlink(workspace: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    make_tree(elsewhere / "b", {"x.md": b"x"})
    (workspace / "a").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ArchiveError, match="symbolic link"):
        create_archive(workspace, PurePosixPath("a/b"), tmp_path / "cache.tzst")


# --- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [ZWL, Compression.GZIP])
def test_round_trip(workspace: Path, tmp_path: Path, compression: Compression) -> None:
    dest = tmp_path / "cache.bin"
    create_archive(workspace, MEMORY, dest, compression)
    out = tmp_path / "restore" / "deep" / ".agent-memory"  # neither it nor its parent exists
    extracted = extract_archive(dest, compression, MEMORY, out)
    assert snapshot(out) == snapshot(workspace / MEMORY)
    assert out.stat().st_mtime_ns == MTIME_NS
    assert "notes/deeper/still/x.md" in extracted
    assert "notes/" in extracted
    assert "caf\u00e9/\u65e5\u672c\u8a9e-\U0001f600.md" in extracted
    assert [p.name for p in out.parent.iterdir()] == [".agent-memory"]


def test_round_trip_replaces_what_was_there(workspace: Path, tmp_path: Path, target: Path) -> None:
    dest = tmp_path / "cache.tzst"
    create_archive(workspace, MEMORY, dest)
    extract_archive(dest, ZWL, MEMORY, target)
    assert not (target / "old.md").exists()
    assert snapshot(target) == snapshot(workspace / MEMORY)
    assert [p.name for p in target.parent.iterdir()] == [target.name]


def test_round_trip_of_an_empty_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / MEMORY).mkdir(parents=True)
    dest = tmp_path / "cache.tzst"
    create_archive(ws, MEMORY, dest)
    out = tmp_path / "out" / ".agent-memory"
    assert extract_archive(dest, ZWL, MEMORY, out) == []
    assert out.is_dir()
    assert list(out.iterdir()) == []


def test_round_trip_of_a_nested_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = PurePosixPath("a/b")
    make_tree(ws / "a" / "b", {"x.md": b"x", "c/y.md": b"y"})
    (ws / "a" / "sibling.md").write_text("not archived")
    dest = tmp_path / "cache.tzst"
    create_archive(ws, folder, dest)
    out = tmp_path / "out"
    assert sorted(extract_archive(dest, ZWL, folder, out)) == ["c/", "c/y.md", "x.md"]
    assert snapshot(out) == snapshot(ws / "a" / "b")


# --- what the JS client's archives look like ---------------------------------------------------


def test_zstd_frame_without_content_size(tmp_path: Path, target: Path) -> None:
    raw = tar_bytes(good_entries())
    data = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(raw)
    assert zstandard.get_frame_parameters(data).content_size == zstandard.CONTENTSIZE_UNKNOWN
    extracted = extract_archive(write(tmp_path, data), ZWL, MEMORY, target)
    assert extracted == ["AGENTS.md", "notes/", "notes/a.md"]
    assert (target / "notes" / "a.md").read_bytes() == b"a" * 3000


def test_several_zstd_frames(tmp_path: Path, target: Path) -> None:
    raw = tar_bytes(good_entries())
    data = zstd_stream(raw[:1000]) + zstd_stream(raw[1000:])
    extract_archive(write(tmp_path, data), ZWL, MEMORY, target)
    assert (target / "AGENTS.md").read_text() == "# memory\n"


def test_legacy_long_window(tmp_path: Path, target: Path) -> None:
    # A window above 2^27 needs `unzstd --long`: only the legacy `zstd` token accepts it.
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=28)
    buf = io.BytesIO()
    with zstandard.ZstdCompressor(compression_params=params).stream_writer(
        buf, closefd=False
    ) as writer:
        writer.write(tar_bytes(good_entries()))
    path = write(tmp_path, buf.getvalue())
    with pytest.raises(ArchiveError):
        extract_archive(path, ZWL, MEMORY, target)
    assert_untouched(target)
    extract_archive(path, Compression.ZSTD, MEMORY, target)
    assert (target / "AGENTS.md").exists()


def test_members_outside_the_folder_are_skipped(
    tmp_path: Path, target: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entries = [
        *good_entries(),
        file_entry("AGENTS.md", b"root memory"),
        dir_entry("other"),
        file_entry("other/x.txt"),
        (info("other/link", tarfile.SYMTYPE, linkname="/etc/passwd"), None),
        file_entry(".agent-memory-2/y.md"),  # a sibling whose name starts like the folder
        file_entry("other/big.bin", b"o" * 300_000),  # last, and skipped over unread
    ]
    with caplog.at_level(logging.DEBUG, logger=archive.__name__):
        extracted = extract_archive(
            write(tmp_path, zstd_stream(tar_bytes(entries))), ZWL, MEMORY, target
        )
    assert extracted == ["AGENTS.md", "notes/", "notes/a.md"]
    assert sorted(snapshot(target)) == ["AGENTS.md", "notes", "notes/a.md"]
    assert [p.name for p in target.parent.iterdir()] == [target.name]
    assert "other/x.txt" in caplog.text
    assert ".agent-memory-2/y.md" in caplog.text


def test_dot_slash_names_and_implicit_directories(tmp_path: Path, target: Path) -> None:
    # No directory entries at all, and names as `tar -C ws .` would write them.
    entries = [file_entry("./.agent-memory/a/b/c.md", b"c"), file_entry("./.agent-memory/d.md")]
    extracted = extract_archive(
        write(tmp_path, zstd_stream(tar_bytes(entries))), ZWL, MEMORY, target
    )
    assert extracted == ["a/b/c.md", "d.md"]
    assert (target / "a" / "b" / "c.md").read_text() == "c"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_unsafe_modes_are_dropped(tmp_path: Path, target: Path) -> None:
    entries = [
        (info(".agent-memory", tarfile.DIRTYPE, mode=0o1777), None),
        (info(".agent-memory/suid", size=1, mode=0o4777), b"x"),
        (info(".agent-memory/ro", size=1, mode=0o400), b"x"),
        (info(".agent-memory/ro-dir", tarfile.DIRTYPE, mode=0o500), None),
        file_entry(".agent-memory/ro-dir/inside.md"),
    ]
    extract_archive(write(tmp_path, zstd_stream(tar_bytes(entries))), ZWL, MEMORY, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "suid").stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "ro").stat().st_mode) == 0o600
    assert stat.S_IMODE((target / "ro-dir").stat().st_mode) == 0o700
    assert (target / "ro-dir" / "inside.md").exists()


# --- hostile and broken archives ---------------------------------------------------------------


def _with(*extra: Entry) -> Callable[[], list[Entry]]:
    return lambda: [*good_entries(), *extra]


LINK_ONLY = "only files and directories"
HOSTILE: dict[str, tuple[Callable[[], list[Entry]], str]] = {
    "absolute name": (_with(file_entry("/tmp/evil")), "absolute name"),
    "absolute name under the folder": (
        _with(file_entry("/.agent-memory/evil")),
        "absolute name",
    ),
    "dotdot": (_with(file_entry("../x")), r"contains '\.\.'"),
    "folder/../../x": (_with(file_entry(".agent-memory/../../x")), r"contains '\.\.'"),
    "dotdot back into the folder": (
        _with(file_entry(".agent-memory/../.agent-memory/x")),
        r"contains '\.\.'",
    ),
    "pax path overrides a harmless name": (
        _with((info(".agent-memory/ok.md", size=1, pax_headers={"path": "../evil"}), b"x")),
        r"'\.\./evil' contains '\.\.'",
    ),
    "nul in a pax path": (
        _with(
            (
                info(".agent-memory/ok.md", size=1, pax_headers={"path": ".agent-memory/a\x00b"}),
                b"x",
            )
        ),
        "NUL byte",
    ),
    "symlink out": (
        _with((info(".agent-memory/l", tarfile.SYMTYPE, linkname="/etc/passwd"), None)),
        "is a symbolic link",
    ),
    "symlink in": (
        _with((info(".agent-memory/l", tarfile.SYMTYPE, linkname="AGENTS.md"), None)),
        "is a symbolic link",
    ),
    "hard link": (
        _with((info(".agent-memory/h", tarfile.LNKTYPE, linkname=".agent-memory/AGENTS.md"), None)),
        "is a hard link",
    ),
    "character device": (
        _with((info(".agent-memory/c", tarfile.CHRTYPE), None)),
        "is a character device",
    ),
    "block device": (_with((info(".agent-memory/b", tarfile.BLKTYPE), None)), "is a block device"),
    "fifo": (_with((info(".agent-memory/f", tarfile.FIFOTYPE), None)), "is a fifo"),
    "file then a file under it": (
        _with(file_entry(".agent-memory/a"), file_entry(".agent-memory/a/b.md")),
        "needs a directory where the archive has a file",
    ),
    "file then a directory of that name": (
        _with(file_entry(".agent-memory/a"), dir_entry(".agent-memory/a")),
        "needs a directory where the archive has a file",
    ),
    "directory then a file of that name": (
        _with(file_entry(".agent-memory/notes", b"x")),
        "is a file where a directory is expected",
    ),
    "the folder itself is a file": (
        lambda: [file_entry(".agent-memory", b"x")],
        "is a file where a directory is expected",
    ),
    "nothing under the folder": (
        lambda: [dir_entry("other"), file_entry("other/x")],
        "nothing under .agent-memory/",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_archive_is_refused(tmp_path: Path, target: Path, case: str) -> None:
    entries, reason = HOSTILE[case]
    path = write(tmp_path, zstd_stream(tar_bytes(entries())))
    with pytest.raises(ArchiveError, match=reason):
        extract_archive(path, ZWL, MEMORY, target)
    assert_untouched(target)


def test_refuses_a_restore_into_a_folder_path_that_escapes(tmp_path: Path, target: Path) -> None:
    path = write(tmp_path, zstd_stream(tar_bytes(good_entries())))
    for folder in ["..", ".", "/abs", ".agent-memory/../x"]:
        with pytest.raises(ArchiveError):
            extract_archive(path, ZWL, PurePosixPath(folder), target)
    assert_untouched(target)


def test_refuses_to_restore_below_a_symlink(tmp_path: Path) -> None:
    # A checkout could make `a` a link to anywhere; restoring `a/b` must not follow it.
    elsewhere = tmp_path / "elsewhere"
    make_tree(elsewhere / "b", {"keep.md": b"keep"})
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a").symlink_to(elsewhere, target_is_directory=True)
    entries = [dir_entry("a"), dir_entry("a/b"), file_entry("a/b/x.md")]
    path = write(tmp_path, zstd_stream(tar_bytes(entries)))
    with pytest.raises(ArchiveError, match="symbolic link"):
        extract_archive(path, ZWL, PurePosixPath("a/b"), ws / "a" / "b")
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["b", "keep.md"]


@pytest.mark.parametrize("mtime", ["1e999999999", "nan", "-inf", "99999999999999999999999999"])
def test_nonsense_mtimes_are_ignored(tmp_path: Path, target: Path, mtime: str) -> None:
    member = info(".agent-memory/x.md", size=1, pax_headers={"mtime": mtime})
    path = write(tmp_path, zstd_stream(tar_bytes([*good_entries(), (member, b"x")])))
    assert "x.md" in extract_archive(path, ZWL, MEMORY, target)
    assert (target / "x.md").read_text() == "x"


def test_oversized_file(tmp_path: Path, target: Path) -> None:
    entries = [*good_entries(), file_entry(".agent-memory/big", b"b" * 2048)]
    path = write(tmp_path, zstd_stream(tar_bytes(entries)))
    with pytest.raises(ArchiveError, match="allowed per file"):
        extract_archive(path, ZWL, MEMORY, target, ArchiveLimits(max_file_bytes=1024))
    assert_untouched(target)


def test_too_many_members(tmp_path: Path, target: Path) -> None:
    entries = [dir_entry(".agent-memory")] + [file_entry(f".agent-memory/{i}") for i in range(10)]
    path = write(tmp_path, zstd_stream(tar_bytes(entries)))
    with pytest.raises(ArchiveError, match="more than 5 members"):
        extract_archive(path, ZWL, MEMORY, target, ArchiveLimits(max_members=5))
    assert_untouched(target)
    extract_archive(path, ZWL, MEMORY, target, ArchiveLimits(max_members=11))


@pytest.mark.parametrize("depth", [33, 2_100])
def test_a_member_deeper_than_allowed_is_refused_before_a_folder_is_made(
    tmp_path: Path, target: Path, depth: int
) -> None:
    deep = ".agent-memory/" + "/".join(["d"] * depth) + "/leaf.md"
    path = write(tmp_path, zstd_stream(tar_bytes([*good_entries(), file_entry(deep)])))
    with pytest.raises(ArchiveError, match=f"is {depth} folders deep below .agent-memory/") as err:
        extract_archive(path, ZWL, MEMORY, target)
    assert len(str(err.value)) < 300  # the name is shortened: the message stays one line
    assert_untouched(target)  # no staging folder left: nothing deep was ever made


def test_the_depth_limit_is_a_limit_like_the_others(tmp_path: Path, target: Path) -> None:
    entries = [*good_entries(), file_entry(".agent-memory/notes/deeper/still.md")]
    path = write(tmp_path, zstd_stream(tar_bytes(entries)))
    with pytest.raises(ArchiveError, match="more than the 1 allowed"):
        extract_archive(path, ZWL, MEMORY, target, ArchiveLimits(max_depth=1))
    assert_untouched(target)
    assert "notes/deeper/still.md" in extract_archive(path, ZWL, MEMORY, target)


class _Zeros(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        buffer[:] = bytes(len(buffer))
        return len(buffer)


def _zstd_file(path: Path, write_tar: Callable[[tarfile.TarFile], None], tail: int = 0) -> Path:
    """Stream a tar through zstd into path, then `tail` zero bytes: never all in memory."""
    with (
        path.open("wb") as raw,
        zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as writer,
    ):
        with tarfile.open(fileobj=writer, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            write_tar(tar)
        chunk = bytes(MiB)
        for _ in range(tail // MiB):
            writer.write(chunk)
    return path


def _count_decompressed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    produced = [0]
    real = archive._ZstdDecoder.decompress

    def counting(self: archive._ZstdDecoder, data: bytes) -> bytes:
        out = real(self, data)
        produced[0] += len(out)
        return out

    monkeypatch.setattr(archive._ZstdDecoder, "decompress", counting)
    return produced


SMALL = ArchiveLimits(max_total_bytes=1 * MiB, max_file_bytes=300 * MiB, max_members=10)


def test_a_200_mib_file_is_refused_from_its_header(
    tmp_path: Path, target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def big(tar: tarfile.TarFile) -> None:
        tar.addfile(info(".agent-memory", tarfile.DIRTYPE))
        tar.addfile(info(".agent-memory/zeros", size=200 * MiB), _Zeros())

    path = _zstd_file(tmp_path / "bomb.tzst", big)
    assert path.stat().st_size < 100 * 1024
    produced = _count_decompressed(monkeypatch)
    with pytest.raises(ArchiveError, match="more than"):
        extract_archive(path, ZWL, MEMORY, target, SMALL)
    assert produced[0] < 20 * MiB  # stopped long before 200 MiB
    assert_untouched(target)


def test_many_files_over_the_total_are_refused(
    tmp_path: Path, target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def many(tar: tarfile.TarFile) -> None:
        tar.addfile(info(".agent-memory", tarfile.DIRTYPE))
        for i in range(8):
            tar.addfile(info(f".agent-memory/{i}", size=25 * MiB), _Zeros())

    path = _zstd_file(tmp_path / "bomb.tzst", many)
    produced = _count_decompressed(monkeypatch)
    limits = ArchiveLimits(max_total_bytes=60 * MiB, max_file_bytes=30 * MiB)
    with pytest.raises(ArchiveError, match="bytes of data"):
        extract_archive(path, ZWL, MEMORY, target, limits)
    assert produced[0] < 100 * MiB
    assert_untouched(target)


def test_zeros_after_the_tar_are_a_bomb_too(
    tmp_path: Path, target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def small(tar: tarfile.TarFile) -> None:
        tar.addfile(info(".agent-memory", tarfile.DIRTYPE))

    path = _zstd_file(tmp_path / "bomb.tzst", small, tail=200 * MiB)
    produced = _count_decompressed(monkeypatch)
    with pytest.raises(ArchiveError, match="decompresses to more than"):
        extract_archive(path, ZWL, MEMORY, target, SMALL)
    assert produced[0] < SMALL.max_stream_bytes + 20 * MiB
    assert_untouched(target)


def test_a_huge_pax_header_is_a_bomb_too(tmp_path: Path, target: Path) -> None:
    member = info(".agent-memory/x.md", size=1, pax_headers={"comment": "c" * (8 * MiB)})
    entries = [*good_entries(), (member, b"x")]
    path = write(tmp_path, zstd_stream(tar_bytes(entries)))
    with pytest.raises(ArchiveError, match="decompresses to more than"):
        extract_archive(path, ZWL, MEMORY, target, SMALL)
    assert_untouched(target)


def _valid(compression: Compression) -> bytes:
    raw = tar_bytes([*good_entries(), file_entry(".agent-memory/z.md", os.urandom(5000))])
    return gzip_bytes(raw) if compression is Compression.GZIP else zstd_stream(raw)


CUTS: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda data: b"",
    "half": lambda data: data[: len(data) // 2],
    "all but 1 byte": lambda data: data[:-1],
    "all but 4 bytes": lambda data: data[:-4],  # the zstd checksum, the gzip length
}


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("compression", [ZWL, Compression.GZIP])
def test_truncated_archive(
    tmp_path: Path, target: Path, compression: Compression, cut: str
) -> None:
    data = CUTS[cut](_valid(compression))
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, data), compression, MEMORY, target)
    assert_untouched(target)


def _tar_cut_at_second_member() -> tuple[bytes, int]:
    raw = tar_bytes(good_entries())
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        offsets = [m.offset for m in tar.getmembers()]
    return raw, offsets[2]


def test_tar_truncated_at_a_member_boundary(tmp_path: Path, target: Path) -> None:
    # tarfile alone takes this for a complete archive with fewer members.
    raw, cut = _tar_cut_at_second_member()
    with pytest.raises(ArchiveError, match="truncated"):
        extract_archive(write(tmp_path, zstd_stream(raw[:cut])), ZWL, MEMORY, target)
    assert_untouched(target)


@pytest.mark.parametrize("garbage", [b"\xff" * 512, b"\x00" * 100 + b"\x01" * 412])
def test_garbage_where_a_header_should_be(tmp_path: Path, target: Path, garbage: bytes) -> None:
    raw, cut = _tar_cut_at_second_member()
    broken = raw[:cut] + garbage + raw[cut + 512 :]
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, zstd_stream(broken)), ZWL, MEMORY, target)
    assert_untouched(target)


def test_data_after_the_end_of_archive(tmp_path: Path, target: Path) -> None:
    raw = tar_bytes(good_entries()) + tar_bytes([file_entry(".agent-memory/late.md")])
    with pytest.raises(ArchiveError, match="after its last member"):
        extract_archive(write(tmp_path, zstd_stream(raw)), ZWL, MEMORY, target)
    assert_untouched(target)


def test_corrupt_zstd_data(tmp_path: Path, target: Path) -> None:
    data = bytearray(_valid(ZWL))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, bytes(data)), ZWL, MEMORY, target)
    assert_untouched(target)


@pytest.mark.parametrize("compression", list(Compression))
def test_random_bytes(tmp_path: Path, target: Path, compression: Compression) -> None:
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, os.urandom(4096)), compression, MEMORY, target)
    assert_untouched(target)


@pytest.mark.parametrize(("written", "read_as"), [(ZWL, Compression.GZIP), (Compression.GZIP, ZWL)])
def test_wrong_compression(
    tmp_path: Path, target: Path, written: Compression, read_as: Compression
) -> None:
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, _valid(written)), read_as, MEMORY, target)
    assert_untouched(target)


def test_an_uncompressed_tar(tmp_path: Path, target: Path) -> None:
    with pytest.raises(ArchiveError):
        extract_archive(write(tmp_path, tar_bytes(good_entries())), ZWL, MEMORY, target)
    assert_untouched(target)


def test_missing_archive_file(tmp_path: Path, target: Path) -> None:
    with pytest.raises(ArchiveError):
        extract_archive(tmp_path / "nope.tzst", ZWL, MEMORY, target)
    assert_untouched(target)


# --- GNU tar, exactly as the JS client runs it (§6.1) -------------------------------------------

needs_gnu_tar_zstd = pytest.mark.skipif(
    shutil.which("tar") is None or shutil.which("zstd") is None,
    reason="needs GNU tar and the zstd CLI on PATH (apt-get install zstd), as on the runner",
)
needs_gnu_tar = pytest.mark.skipif(shutil.which("tar") is None, reason="needs GNU tar on PATH")

COMPRESS_OPTIONS = {
    ZWL: ["--use-compress-program", "zstdmt"],
    Compression.ZSTD: ["--use-compress-program", "zstdmt --long=30"],
    Compression.GZIP: ["-z"],
}
EXTRACT_OPTIONS = {
    ZWL: ["--use-compress-program", "unzstd"],
    Compression.ZSTD: ["--use-compress-program", "unzstd --long=30"],
    Compression.GZIP: ["-z"],
}


def js_create(
    tmp_path: Path, workspace: Path, manifest: list[str], compression: Compression
) -> Path:
    """`createTar` of @actions/cache: tar runs in a temp folder holding manifest.txt."""
    temp = tmp_path / "runner-temp" / "3f1c"
    temp.mkdir(parents=True)
    (temp / "manifest.txt").write_text("\n".join(manifest))
    name = "cache.tgz" if compression is Compression.GZIP else "cache.tzst"
    subprocess.run(
        ["tar", "--posix", "-cf", name, "--exclude", name, "-P", "-C", str(workspace),
         "--files-from", "manifest.txt", *COMPRESS_OPTIONS[compression]],
        cwd=temp, check=True, capture_output=True,
    )  # fmt: skip
    return temp / name


def js_extract(archive_path: Path, workspace: Path, compression: Compression) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["tar", "-xf", str(archive_path), "-P", "-C", str(workspace),
         *EXTRACT_OPTIONS[compression]],
        check=True, capture_output=True,
    )  # fmt: skip


def _gnu_tar_params(legacy: bool = True) -> list[object]:
    """zstd-without-long and gzip; also the legacy `--long=30` zstd, which we only ever read."""
    params: list[object] = [
        pytest.param(ZWL, marks=needs_gnu_tar_zstd, id="zstd-without-long"),
        pytest.param(Compression.GZIP, marks=needs_gnu_tar, id="gzip"),
    ]
    if legacy:
        params.append(pytest.param(Compression.ZSTD, marks=needs_gnu_tar_zstd, id="zstd-long"))
    return params


@pytest.mark.parametrize("compression", _gnu_tar_params(legacy=False))
def test_gnu_tar_extracts_ours(workspace: Path, tmp_path: Path, compression: Compression) -> None:
    dest = tmp_path / "cache.bin"
    create_archive(workspace, MEMORY, dest, compression)
    restored = tmp_path / "restored-ws"
    js_extract(dest, restored, compression)
    assert [p.name for p in restored.iterdir()] == [".agent-memory"]
    # GNU tar restores the exact nanosecond mtimes from our pax records.
    assert snapshot(restored / MEMORY) == snapshot(workspace / MEMORY)


@pytest.mark.parametrize("compression", _gnu_tar_params())
def test_we_extract_gnu_tars(workspace: Path, tmp_path: Path, compression: Compression) -> None:
    made = js_create(tmp_path, workspace, [".agent-memory"], compression)
    out = tmp_path / "out" / ".agent-memory"
    extracted = extract_archive(made, compression, MEMORY, out)
    assert snapshot(out) == snapshot(workspace / MEMORY)
    assert sorted(extracted) == sorted(
        p.relative_to(workspace / MEMORY).as_posix() + ("/" if p.is_dir() else "")
        for p in (workspace / MEMORY).rglob("*")
    )


@needs_gnu_tar_zstd
def test_we_extract_only_the_folder_from_a_several_path_gnu_tar(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").write_text("root")
    made = js_create(tmp_path, workspace, [".agent-memory", "AGENTS.md"], ZWL)
    out = tmp_path / "out" / ".agent-memory"
    extract_archive(made, ZWL, MEMORY, out)
    assert snapshot(out) == snapshot(workspace / MEMORY)
    assert [p.name for p in out.parent.iterdir()] == [".agent-memory"]


@needs_gnu_tar_zstd
def test_a_gnu_tar_with_a_path_outside_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    # The JS client stores such paths as `../…`; any `..` makes the whole archive suspect.
    make_tree(tmp_path / "fakehome" / ".cache" / "agentx", {"x.txt": b"x"})
    manifest = [".agent-memory", "../fakehome/.cache/agentx"]
    made = js_create(tmp_path, workspace, manifest, ZWL)
    out = tmp_path / "out" / ".agent-memory"
    with pytest.raises(ArchiveError, match=r"'\.\.'"):
        extract_archive(made, ZWL, MEMORY, out)
    assert not out.exists()


# --- ownership (§6.6) --------------------------------------------------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _tree_with_link(tmp_path: Path) -> Path:
    folder = tmp_path / "ws" / ".agent-memory"
    make_tree(folder, {"a.md": b"a", "sub/b.md": b"b"})
    (folder / "link").symlink_to("/etc/passwd")
    return folder


def _record_chown(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, int, int, bool]]:
    calls: list[tuple[Path, int, int, bool]] = []

    def fake_chown(path: object, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        calls.append((Path(str(path)), uid, gid, follow_symlinks))

    monkeypatch.setattr(os, "chown", fake_chown)
    return calls


@needs_root
def test_fix_ownership_gives_everything_to_the_workspace_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree_with_link(tmp_path)
    workspace = folder.parent
    os.chown(workspace, 4321, 8765)
    calls = _record_chown(monkeypatch)
    fix_ownership(folder, workspace)
    expected = {folder, folder / "a.md", folder / "sub", folder / "sub" / "b.md", folder / "link"}
    assert {c[0] for c in calls} == expected
    assert all(c[1:] == (4321, 8765, False) for c in calls)


@needs_root
def test_fix_ownership_really_chowns_and_does_not_follow_links(tmp_path: Path) -> None:
    folder = _tree_with_link(tmp_path)
    workspace = folder.parent
    os.chown(workspace, 4321, 8765)
    passwd_owner = Path("/etc/passwd").stat().st_uid
    fix_ownership(folder, workspace)
    for path in (folder, *folder.rglob("*")):
        st = path.lstat()
        assert (st.st_uid, st.st_gid) == (4321, 8765), path
    assert Path("/etc/passwd").stat().st_uid == passwd_owner


def test_fix_ownership_does_nothing_when_not_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree_with_link(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 1001)
    calls = _record_chown(monkeypatch)
    fix_ownership(folder, folder.parent)
    assert calls == []


def test_fix_ownership_does_nothing_when_owners_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree_with_link(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    calls = _record_chown(monkeypatch)
    fix_ownership(folder, folder.parent)
    fix_ownership(tmp_path / "missing", folder.parent)
    fix_ownership(folder, tmp_path / "missing-like")
    assert calls == []
