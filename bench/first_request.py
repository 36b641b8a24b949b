"""How long the action works before its first model request, on memory of every shape.

    python bench/first_request.py [--kib 256,1024] [--shapes lessons,low_vocabulary,all_stale]
    python bench/first_request.py --profile low_vocabulary   # cProfile of one 1 MiB run

One push run on main (``mode: maintenance``, ``max_memory_kb: 1024``) per shape and size, the
whole action in this process (``CacheRunner``: the real ``main()``; the Actions cache is
``FakeCacheService`` on 127.0.0.1; GitHub is ``FakeGitHub`` through ``responses``; the model is
a scripted one that records when the first request reaches it), over a git checkout of
``memory_shapes.checkout_files()``. Memory (``tests/fakes/memory_shapes.py``) is saved to the
cache by an untimed run first, without a maintenance digest, so the timed run checks it all.

Printed per run: wall and CPU seconds from ``main()`` to the first model request, CPU per KiB,
and the ratios to the ``lessons`` shape of the same size and to the same shape's smallest size
(per KiB: 1.00x is linear). Target (issue 26): at 1 MiB, every shape's first request within
10 s of wall time on 2 quiet cores.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fakes.cache_harness import default_tuning, fast_tuning  # noqa: E402
from tests.fakes.cache_service import FakeCacheService  # noqa: E402
from tests.fakes.git_repo import GitRepo, isolated_git_env  # noqa: E402
from tests.fakes.github_api import FakeGitHub  # noqa: E402
from tests.fakes.maintenance_checkout import MAIN, write  # noqa: E402
from tests.fakes.memory_shapes import all_stale, checkout_files, lessons, low_vocabulary  # noqa: E402
from tests.fakes.runner import CacheRunner, push_event  # noqa: E402
from tests.fakes.scripted_model import ScriptedChatModel  # noqa: E402

SHAPES: dict[str, Callable[[int, int], str]] = {
    "lessons": lessons,
    "low_vocabulary": low_vocabulary,
    "all_stale": all_stale,
}
SIZES_KIB = (256, 1024)
TARGET_S = 10.0


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def quiet() -> Iterator[None]:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        yield


@dataclass(frozen=True, kw_only=True)
class FirstRequest:
    wall_s: float
    cpu_s: float
    size: int
    log: str


class Timed:
    """Records the wall clock and CPU when the first model request arrives."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __call__(self) -> None:
        self.wall, self.cpu = time.monotonic(), cpu()


def prepared(root: Path, service: FakeCacheService, memory: str) -> CacheRunner:
    """A runner over a checkout of ``checkout_files()`` whose cache holds ``memory``, saved by
    a run that could not check citations (so it left no digest)."""
    env = isolated_git_env(root / "home")
    os.environ.update(env)
    runner = CacheRunner(
        root,
        inputs={"mode": "maintenance", "max_memory_kb": "1024", "max_input_tokens": "2000000"},
        extra_env={**service.env(), "ACTIONS_RUNTIME_TOKEN": service.token},
    )
    repo = GitRepo(runner.workspace, env)
    repo.git("init", "--quiet", "--initial-branch=main")
    for path, text in checkout_files().items():
        repo.write(path, text)
    repo.commit("Start")
    git, hidden = runner.workspace / ".git", root / "hidden-git"
    git.rename(hidden)
    try:
        seeded = runner.run(
            "push", push_event(), MAIN, ScriptedChatModel.from_script(write(memory), "Seeded.")
        )
    finally:
        hidden.rename(git)
    if seeded.exit_code != 0 or not seeded.outputs.get("saved_key"):
        raise SystemExit(f"seeding failed:\n{seeded.stdout[-2000:]}")
    return runner


def first_request(
    root: Path, shape: str, kib: int, profile: cProfile.Profile | None = None
) -> FirstRequest:
    memory = SHAPES[shape](kib * 1024, kib)
    with FakeCacheService([MAIN]) as service, quiet():
        runner = prepared(root, service, memory)
        timed = Timed()
        model = ScriptedChatModel.from_script("Nothing to change.")
        model.before_first_call = timed
        if profile is not None:
            profile.enable()
        began_wall, began_cpu = time.monotonic(), cpu()
        outcome = runner.run("push", push_event(), MAIN, model)
        if profile is not None:
            profile.disable()
    if outcome.exit_code != 0 or model.calls != 1:
        raise SystemExit(
            f"the {shape} {kib} KiB run did not reach the model:\n{outcome.stdout[-3000:]}"
        )
    return FirstRequest(
        wall_s=timed.wall - began_wall,
        cpu_s=timed.cpu - began_cpu,
        size=len(memory.encode()),
        log=outcome.stdout,
    )


def run(shapes: Sequence[str], sizes: Sequence[int], work: Path) -> bool:
    first_request(work / "warm-up", "lessons", 16)  # imports, caches: not part of any figure
    print(
        f"{'shape':<16}{'memory':>9}{'items':>7}{'wall s':>8}{'CPU s':>8}{'ms/KiB':>8}"
        f"{'vs lessons':>11}{'vs smallest':>12}"
    )
    per_kib: dict[tuple[str, int], float] = {}
    ok = True
    for kib in sizes:
        for shape in shapes:
            found = first_request(work / f"{shape}-{kib}", shape, kib)
            per_kib[shape, kib] = found.cpu_s / (found.size / 1024)
            items = sum(
                1
                for line in SHAPES[shape](kib * 1024, kib).splitlines()
                if line and not line.startswith("#")
            )
            reference = per_kib.get(("lessons", kib))
            smallest = per_kib.get((shape, sizes[0]))
            print(
                f"{shape:<16}{kib:>5} KiB{items:>7}{found.wall_s:>8.2f}{found.cpu_s:>8.2f}"
                f"{per_kib[shape, kib] * 1000:>8.2f}"
                f"{_ratio(per_kib[shape, kib], reference):>11}"
                f"{_ratio(per_kib[shape, kib], smallest):>12}"
            )
            for line in found.log.splitlines():
                if "Maintenance" in line and ("items" in line or "did not check" in line):
                    print(f"{'':<16}  {line.strip()[:110]}")
            if kib == 1024:
                ok = ok and found.wall_s <= TARGET_S
    print(
        f"target: first request within {TARGET_S:g} s at 1 MiB on every shape: "
        f"{'met' if ok else 'NOT MET'}"
    )
    return ok


def _ratio(value: float, reference: float | None) -> str:
    return f"{value / reference:.2f}x" if reference else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--kib", default=",".join(map(str, SIZES_KIB)), help="memory sizes, KiB")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="shapes, comma separated")
    parser.add_argument("--profile", metavar="SHAPE", help="profile one 1 MiB run of SHAPE")
    args = parser.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = [s for s in [*shapes, *([args.profile] if args.profile else [])] if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; choose from {', '.join(SHAPES)}")
    sizes = sorted(int(k) for k in args.kib.split(",") if k.strip())
    began = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="memory-agent-first-request-") as temp,
        FakeGitHub().serve(),
        default_tuning(fast_tuning([], timeout=30.0)),
    ):
        if args.profile:
            profile = cProfile.Profile()
            found = first_request(Path(temp) / "profiled", args.profile, 1024, profile)
            print(f"{args.profile} 1 MiB: first request after {found.wall_s:.2f} s (profiled)")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
            return 0
        ok = run(shapes, sizes, Path(temp))
    print(f"\nbenchmark wall time: {time.monotonic() - began:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
