"""The Actions cache store next to the official client, and what cache faults do to a whole run.

    python bench/cache.py [--repeat N]

(a) Round trip, whole processes: restore a memory folder, then save it under a new key, once with
    our client (a ``python`` process running ``ActionsCacheStore.restore`` then ``.save``) and
    once with the official ``@actions/cache`` 6.3.0 (a ``node`` process running ``restoreCache``
    then ``saveCache``, ``tests/interop/roundtrip.mjs``), against one ``FakeCacheService`` on
    127.0.0.1 (v2, zstd), for a 64 KiB folder of text and a 5 MiB folder of half text, half
    random bytes. One untimed warm-up each, then N timed runs (default 5), alternating which
    client goes first; median and minimum wall time per process in ms, and ours/official.
    Every restored tree is checked against the source, byte for byte.

(b) Fault matrix, in-process: the whole action (``main()``, a scripted model, the ``responses``
    GitHub fake) on a pull request whose committed memory is in the cache, once per fault the
    fake service can inject, on each route where it applies (lookup, download, create, upload,
    finalize), plus corrupt, truncated and malicious archives on download. Counted: jobs that
    failed (exit code not 0), partial memory folders (what the restore left was neither the whole
    entry nor nothing), and files outside the memory folder. The exit code is 1 if any is not 0.

Nothing leaves 127.0.0.1. Needs node and ``tests/interop/node_modules`` for (a); without them (a)
is skipped with the reason.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import secrets
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import zstandard

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.language_models import BaseChatModel  # noqa: E402

from memory_action.gha import Workflow  # noqa: E402
from memory_action.store.actions_cache import ActionsCacheStore  # noqa: E402
from memory_action.store.archive import Compression, cache_version, create_archive  # noqa: E402
from memory_action.store.cache_env import decide_cache_config  # noqa: E402
from tests.fakes.cache_harness import default_tuning, fast_tuning, tree  # noqa: E402
from tests.fakes.cache_service import (  # noqa: E402
    BLOB_GET,
    BLOB_PUT,
    CREATE,
    FINALIZE,
    LOOKUP,
    FakeCacheService,
    Fault,
)
from tests.fakes.github_api import serve_fetch_pull  # noqa: E402
from tests.fakes.official_client import INTEROP_DIR, OfficialClient, missing_reason  # noqa: E402
from tests.fakes.runner import CacheRunner, pull_request_event  # noqa: E402
from tests.fakes.scripted_model import ScriptedChatModel, tool_call  # noqa: E402

KiB = 1024
MiB = 1024 * KiB
MEMORY = PurePosixPath(".agent-memory")
VERSION = cache_version([str(MEMORY)], Compression.ZSTD_WITHOUT_LONG)
CHILD_TIMEOUT_S = 120
MAIN_REF = "refs/heads/main"
PR_REF = "refs/pull/7/merge"

# -- (a) round trip ------------------------------------------------------------------------------

# The child process of our client: argv as for tests/interop/roundtrip.mjs.
OURS_ROUNDTRIP = """
import json, os, sys
from pathlib import PurePosixPath
from memory_action.gha import Workflow
from memory_action.store.actions_cache import ActionsCacheStore
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_env import decide_cache_config

path, save_key, primary, *restore_keys = sys.argv[1:]
config = decide_cache_config(os.environ).config
folder = PurePosixPath(path)
target = config.workspace.joinpath(*folder.parts)
with ActionsCacheStore(config, folder, Workflow(os.environ)) as store:
    restored = store.restore(RestoreKeys(primary, tuple(restore_keys)), target)
    saved = store.save(save_key, target)
print(json.dumps({"op": "roundtrip", "matchedKey": restored.matched_key,
                  "saved": saved.saved, "warning": restored.warning, "reason": saved.reason}))
"""

WORDS_TEXT = (
    "retry fetch client server cache memory agent review pull request branch commit test "
    "fixture timeout backoff token scope key prefix entry archive restore save version zstd "
    "gzip tar header member folder file path workspace runner container action workflow step "
    "job output summary comment diff patch model prompt tool call answer lesson convention "
    "always never prefer avoid use keep check assert raise return yield async await lock "
    "thread process queue config setting default value error warning notice log trace"
)
WORDS = WORDS_TEXT.split()


def text(rng: random.Random, size: int) -> bytes:
    """Markdown-ish notes: headings, bullets with code spans, paragraphs; ``size`` bytes."""
    out = io.StringIO()
    while out.tell() < size:
        kind = rng.random()
        words = rng.choices(WORDS, k=rng.randint(6, 18))
        if kind < 0.08:
            out.write(f"\n## {' '.join(words[:4]).capitalize()}\n\n")
        elif kind < 0.7:
            words[rng.randrange(len(words))] = f"`{rng.choice(WORDS)}()`"
            out.write(f"- {' '.join(words).capitalize()}.\n")
        else:
            out.write(f"{' '.join(words * 2).capitalize()}.\n")
    return out.getvalue().encode()[:size]


def memory_folder(total: int) -> dict[str, bytes]:
    """A few files: all text for small folders; half text, half random bytes for large ones."""
    rng = random.Random(total)  # the same content on every run of the benchmark
    if total <= 256 * KiB:
        shares = {"AGENTS.md": 0.4, "notes/conventions.md": 0.25, "notes/decisions.md": 0.25}
        files = {name: text(rng, int(total * share)) for name, share in shares.items()}
        files["notes/glossary.md"] = text(rng, total - sum(len(data) for data in files.values()))
        return files
    half = total // 2
    files = {
        "AGENTS.md": text(rng, 256 * KiB),
        "notes/conventions.md": text(rng, half // 2),
        "notes/history.md": text(rng, half - half // 2 - 256 * KiB),
        "data/embeddings.bin": rng.randbytes(half * 3 // 5),
    }
    files["data/index.bin"] = rng.randbytes(total - sum(len(data) for data in files.values()))
    return files


def write_folder(workspace: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = workspace / MEMORY / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@dataclass
class Timing:
    ours: list[float] = field(default_factory=list)
    official: list[float] = field(default_factory=list)
    archive_bytes: int = 0


def seed(service: FakeCacheService, work: Path, files: dict[str, bytes], key: str) -> int:
    """Save the source folder with our client in this process; the size of the archive."""
    workspace = work / "source"
    write_folder(workspace, files)
    env = {
        **service.env("v2"),
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(work / "source-temp"),
    }
    config = decide_cache_config(env).config
    if config is None:
        raise SystemExit("the fake service's environment gave no cache config")
    with ActionsCacheStore(config, MEMORY, Workflow(env={}, out=io.StringIO())) as store:
        saved = store.save(key, workspace / MEMORY)
    if not saved.saved or saved.size_bytes is None:
        raise SystemExit(f"seeding the cache failed: {saved.reason}")
    return saved.size_bytes


def run_child(
    client: str, service: FakeCacheService, run_dir: Path, args: Sequence[str]
) -> tuple[float, dict[str, Any], Path]:
    """One whole process; its wall time in seconds, its JSON result and its workspace."""
    workspace, temp = run_dir / "workspace", run_dir / "temp"
    workspace.mkdir(parents=True)
    env = OfficialClient(service, workspace, temp).env()  # what a job step gets, plus V2 for node
    temp.mkdir(parents=True, exist_ok=True)
    if client == "ours":
        del env["ACTIONS_CACHE_SERVICE_V2"]  # a container action never gets it
        env["PYTHONPATH"] = str(ROOT)
        command = [sys.executable, "-c", OURS_ROUNDTRIP, *args]
    else:
        command = [shutil.which("node") or "node", str(INTEROP_DIR / "roundtrip.mjs"), *args]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
        check=False,
    )
    elapsed = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise SystemExit(
            f"{client} round trip failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return elapsed, json.loads(lines[-1]), workspace


def check_round_trip(
    client: str, result: dict[str, Any], workspace: Path, seed_key: str, files: dict[str, bytes]
) -> None:
    expected = {f"{MEMORY}/{name}": data for name, data in files.items()}
    restored = {name: data for name, data in tree(workspace).items() if data != "dir"}
    if result.get("matchedKey") != seed_key or restored != expected:
        raise SystemExit(f"{client}: the round trip did not restore the seeded folder: {result}")
    if client == "ours" and not result.get("saved"):
        raise SystemExit(f"ours: not saved: {result}")
    if client == "official" and not isinstance(result.get("cacheId"), int):
        raise SystemExit(f"official: not saved: {result}")


def round_trip(repeat: int, work: Path) -> dict[str, Timing]:
    figures: dict[str, Timing] = {}
    with FakeCacheService([MAIN_REF]) as service:
        for label, size in (("64 KiB", 64 * KiB), ("5 MiB", 5 * MiB)):
            files = memory_folder(size)
            slug = label.replace(" ", "").lower()
            seed_prefix = f"bench/{slug}/seed/"
            timing = Timing(archive_bytes=seed(service, work / slug, files, f"{seed_prefix}1"))
            for number in range(repeat + 1):  # number 0 is the warm-up
                order = ("ours", "official") if number % 2 == 0 else ("official", "ours")
                for client in order:
                    run_dir = work / slug / f"{client}-{number}"
                    args = [str(MEMORY), f"bench/{slug}/saved/{client}-{number}", seed_prefix]
                    elapsed, result, workspace = run_child(client, service, run_dir, args)
                    check_round_trip(client, result, workspace, f"{seed_prefix}1", files)
                    shutil.rmtree(run_dir)
                    if number > 0:
                        getattr(timing, client).append(elapsed * 1000)
            figures[label] = timing
    return figures


def print_round_trip(figures: dict[str, Timing], repeat: int) -> None:
    print(f"(a) restore + save round trip, whole processes, v2, zstd, {repeat} timed runs each")
    print(f"{'folder':<8} {'archive':>9}  {'client':<16} {'median ms':>10} {'min ms':>8}")
    for label, timing in figures.items():
        archive = f"{timing.archive_bytes / KiB:,.0f} KiB"
        for name, values in (("ours (python)", timing.ours), ("official (node)", timing.official)):
            print(
                f"{label:<8} {archive:>9}  {name:<16} "
                f"{statistics.median(values):>10.0f} {min(values):>8.0f}"
            )
            archive = ""
        median_ratio = statistics.median(timing.ours) / statistics.median(timing.official)
        min_ratio = min(timing.ours) / min(timing.official)
        verdict = "ours no slower" if median_ratio <= 1.0 else "ours SLOWER"
        print(
            f"{'':<8} {'':>9}  {'ours/official':<16} {median_ratio:>10.2f} {min_ratio:>8.2f}"
            f"  ({verdict})"
        )


# -- (b) fault matrix ----------------------------------------------------------------------------

ROUTES = {
    "lookup": LOOKUP,
    "download": BLOB_GET,
    "create": CREATE,
    "upload": BLOB_PUT,
    "finalize": FINALIZE,
}
ATTEMPTS = 5  # the most any call tries: every attempt meets the fault
SERVICE_FAULTS: dict[str, Callable[[], Fault]] = {
    "500": lambda: Fault.http(500),
    "502": lambda: Fault.http(502),
    "503": lambda: Fault.http(503),
    "504": lambda: Fault.http(504),
    "429": lambda: Fault.rate_limit("30"),
    "hang": lambda: Fault.hang(10.0),
    "reset": Fault.reset,
    "truncated body": Fault.truncate,
    "non-JSON body": lambda: Fault.non_json(200),
}
# Only AGENTS.md: the action keeps nothing else from a restored entry (memory is untrusted).
SEEDED = {
    "AGENTS.md": b"# Conventions\n\n- Network calls retry with tenacity.\n",
}
LESSON = "# Conventions\n\n- Network calls retry with tenacity.\n- PR 7: keep the budget at 3.\n"
COMMITTED_KEY = "memory-agent/v1/memory-agent/repo/committed/1000-1"
ALLOWED_IN_RUN_DIR = {"event.json", "output", "summary"}


@dataclass(frozen=True)
class Scenario:
    name: str
    route: str
    faults: tuple[Fault, ...]


@dataclass
class Row:
    scenario: Scenario
    exit_code: int
    restored: bool
    saved: bool
    warnings: int
    partial: bool
    outside: list[str]
    traceback: bool
    ms: float


def member(
    name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info, data


class Zeros(io.RawIOBase):
    """``size`` zero bytes, without holding them in memory."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def zstd_tar(*members: tuple[tarfile.TarInfo, bytes | int]) -> bytes:
    """A zstd pax tar whose first members are a good memory folder; ``int`` data = that many 0s."""
    raw = io.BytesIO()
    with (
        zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as out,
        tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        head = [member(str(MEMORY), kind=tarfile.DIRTYPE), member(f"{MEMORY}/AGENTS.md", b"fine\n")]
        for info, data in [*head, *members]:
            if isinstance(data, int):
                info.size = data
                tar.addfile(info, Zeros(data))
            else:
                tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return raw.getvalue()


def archive_scenarios(valid: bytes, absolute_target: str) -> dict[str, bytes]:
    big_file = member(f"{MEMORY}/big.md")
    bomb = [member(f"{MEMORY}/bomb-{i}.md") for i in range(10)]
    return {
        "corrupt archive": random.Random(1).randbytes(4096),
        "truncated archive": valid[: len(valid) // 2],
        "absolute path": zstd_tar(member(absolute_target, b"pwned\n")),
        "'..' path": zstd_tar(member(f"{MEMORY}/../../evil.txt", b"pwned\n")),
        "symlink escape": zstd_tar(
            member(f"{MEMORY}/notes", kind=tarfile.SYMTYPE, link="../../outside"),
            member(f"{MEMORY}/notes/evil.txt", b"pwned\n"),
        ),
        "hard link": zstd_tar(
            member(f"{MEMORY}/hard", kind=tarfile.LNKTYPE, link="../outside/secret.txt")
        ),
        "oversized file (9 MiB)": zstd_tar((big_file[0], 9 * MiB)),
        "bomb (10 x 7 MiB)": zstd_tar(*[(info, 7 * MiB) for info, _ in bomb]),
    }


def scenarios(valid: bytes, absolute_target: str) -> list[Scenario]:
    found = [Scenario("none (control)", "-", ())]  # restores and saves: the detectors accept it
    found += [
        Scenario(kind, route, tuple(make() for _ in range(ATTEMPTS)))
        for route in ROUTES
        for kind, make in SERVICE_FAULTS.items()
    ]
    for kind, body in archive_scenarios(valid, absolute_target).items():
        found.append(Scenario(kind, "download", (Fault.replace_body(body),)))
    return found


def outside_files(root: Path, absolute_target: str) -> list[str]:
    """Whatever exists that a run should not leave: anything in the workspace but the memory
    folder, anything new in a run's folder (RUNNER_TEMP), anything in ``outside/`` but its
    file, the absolute path an archive named."""
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if parts[0] == "workspace":
            ok = len(parts) == 1 or parts[1] == str(MEMORY)
        elif parts[0].startswith("run-"):
            ok = len(parts) == 1 or (len(parts) == 2 and parts[1] in ALLOWED_IN_RUN_DIR)
        elif parts[0] == "outside":
            ok = len(parts) == 1 or rel == "outside/secret.txt"
        else:
            ok = False
        if not ok:
            found.append(rel)
    if os.path.lexists(absolute_target) or os.path.lexists(Path(absolute_target).parent):
        found.append(absolute_target)
    return found


def run_scenario(scenario: Scenario, work: Path, seed_archive: bytes, absolute_target: str) -> Row:
    root = work / f"scenario-{secrets.token_hex(4)}"
    (root / "outside").mkdir(parents=True)
    (root / "outside" / "secret.txt").write_text("do not touch\n")
    seen: dict[str, bytes | str] = {}
    folder = root / "workspace" / MEMORY

    def build_model() -> BaseChatModel:
        # Called after the restore and before the agent runs: what the restore left.
        seen.update(tree(folder))
        return ScriptedChatModel.from_script(
            tool_call("write_file", {"file_path": f"{MEMORY}/AGENTS.md", "content": LESSON}),
            "The loop returns on the first attempt.",
        )

    with FakeCacheService([PR_REF, MAIN_REF]) as service, serve_fetch_pull():
        service.seed(COMMITTED_KEY, VERSION, seed_archive, scope=MAIN_REF)
        if scenario.faults:
            service.fail(ROUTES[scenario.route], *scenario.faults)
        runner = CacheRunner(root, extra_env=service.env())
        start = time.perf_counter()
        try:
            outcome = runner.run("pull_request", pull_request_event(), PR_REF, build_model)
            exit_code, log, outputs = (
                outcome.exit_code,
                outcome.stdout + outcome.stderr,
                outcome.outputs,
            )
        except Exception as exc:  # counted as a failed job, never hidden
            exit_code, log, outputs = -1, f"Traceback: {exc!r}", {}
        elapsed = (time.perf_counter() - start) * 1000
    partial = seen not in ({}, tree_files(SEEDED))  # all or nothing
    row = Row(
        scenario=scenario,
        exit_code=exit_code,
        restored=outputs.get("memory_hit") == "true",
        saved=bool(outputs.get("saved_key")),
        warnings=sum(line.startswith("::warning") for line in log.splitlines()),
        partial=partial,
        outside=outside_files(root, absolute_target),
        traceback="Traceback" in log,
        ms=elapsed,
    )
    shutil.rmtree(root, ignore_errors=True)
    return row


def tree_files(files: dict[str, bytes]) -> dict[str, bytes | str]:
    """``tree()`` of a folder holding ``files``: directories included."""
    out: dict[str, bytes | str] = {}
    for name, data in files.items():
        parts = name.split("/")
        for end in range(1, len(parts)):
            out["/".join(parts[:end])] = "dir"
        out[name] = data
    return out


def seed_archive(work: Path) -> bytes:
    write_folder(work / "seed", SEEDED)
    archive = work / "seed.tzst"
    create_archive(work / "seed", MEMORY, archive)
    return archive.read_bytes()


def fault_matrix(work: Path) -> list[Row]:
    valid = seed_archive(work)
    absolute_target = f"{tempfile.gettempdir()}/memory-agent-escape-{secrets.token_hex(6)}/evil.txt"
    sleeps: list[float] = []
    with default_tuning(fast_tuning(sleeps, timeout=1.0)):
        return [
            run_scenario(s, work, valid, absolute_target) for s in scenarios(valid, absolute_target)
        ]


def print_fault_matrix(rows: list[Row]) -> tuple[int, int, int]:
    print(
        "(b) fault matrix: the whole action in-process on a pull request, v2, per fault and route"
    )
    print(
        f"{'fault':<24} {'route':<9} {'exit':>4}  {'memory':<8} {'saved':<5} {'warn':>4}  "
        f"{'partial':<7} {'outside':<7} {'ms':>6}"
    )
    for row in rows:
        print(
            f"{row.scenario.name:<24} {row.scenario.route:<9} {row.exit_code:>4}  "
            f"{'restored' if row.restored else 'missing':<8} {'yes' if row.saved else 'no':<5} "
            f"{row.warnings:>4}  {'YES' if row.partial else 'no':<7} "
            f"{'YES' if row.outside else 'no':<7} {row.ms:>6.0f}"
        )
        for path in row.outside:
            print(f"    outside the memory folder: {path}")
    failed = sum(row.exit_code != 0 or row.traceback for row in rows)
    partial = sum(row.partial for row in rows)
    outside = sum(bool(row.outside) for row in rows)
    print(
        f"\nscenarios run: {len(rows)}; jobs failed: {failed} (target 0); partial memory folders: "
        f"{partial} (target 0); runs with files outside the memory folder: {outside} (target 0)"
    )
    restored, saved = sum(row.restored for row in rows), sum(row.saved for row in rows)
    warned = sum(row.warnings > 0 for row in rows)
    print(f"memory restored in {restored}, saved in {saved}, with a warning in {warned}")
    return failed, partial, outside


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per client (5)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memory-agent-bench-") as tmp:
        work = Path(tmp)
        reason = missing_reason()
        if reason is None:
            print_round_trip(round_trip(args.repeat, work / "round-trip"), args.repeat)
        else:
            print(f"(a) skipped: the official client cannot run here: {reason}")
        print()
        failed, partial, outside = print_fault_matrix(fault_matrix(work / "faults"))
    print(f"\nbenchmark wall time: {time.monotonic() - began:.1f} s")
    if failed or partial or outside:
        print("FAIL: a cache fault failed a job or left a partial or escaped memory folder")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
