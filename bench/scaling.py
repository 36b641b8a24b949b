"""How a run's CPU time grows: with memory size (maintenance), pull request size (review) and
the number of entries that raced (restore and merge).

    python bench/scaling.py [--only maintenance,pull_requests,raced]

(a) Maintenance: one push run on main (``mode: maintenance``, ``max_memory_kb: 1024``) per memory
size, in this process (``ActionRunner``: the real ``main()``, the local store, a scripted model
that answers once), over a git checkout whose files some items cite. Memory is generated
(``tests/fakes/memory_items.py``: lessons citing paths and symbols, 3% near-copies) and
saved by an untimed run first. CPU is this process's plus its children's (git) during the timed
run. Target: a 1 MiB memory within 10 s, and CPU per KiB at 1 MiB at most twice that at 16 KiB.

(b) Pull requests of 1 to 1,000 changed files (a small hunk each), reviewed by the action in a
child process (``python -m memory_action.cli run``) against the GitHub REST fake and the GitHub
Models stub on 127.0.0.1 (its diligent reviewer; rate limits raised so no run waits). CPU is the
child's (start-up included, which the 1-file run shows).

(c) 1 to 200 entries saved by runs that raced (each the seeded memory plus one fact, none
knowing the others), then one push run that restores, merges them all, maintains and saves,
in this process. Checked: every fact reaches the model.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
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

from memory_action.evaluation.github.http import GitHubHttpServer  # noqa: E402
from memory_action.lifecycle.layers import write_entry  # noqa: E402 - needs ROOT on sys.path
from memory_action.memory.provenance import Provenance  # noqa: E402
from memory_action.memory.state import EntryState  # noqa: E402
from memory_action.store.local import LocalDirectoryStore  # noqa: E402
from tests.fakes.git_repo import GitRepo, isolated_git_env  # noqa: E402
from tests.fakes.github_api import FakeGitHub, FakePullRequest, changed_file  # noqa: E402
from tests.fakes.github_models_stub import FreeTier, GitHubModelsStub  # noqa: E402
from tests.fakes.maintenance_checkout import maintain, seed_without_digest, write  # noqa: E402
from tests.fakes.memory_items import PATHS, SYMBOLS, memory_of  # noqa: E402
from tests.fakes.runner import (  # noqa: E402
    ActionRunner,
    child_env,
    parse_outputs,
    pull_request_event,
)

MEMORY_KIB = (16, 64, 256, 1024)
PR_FILES = (1, 10, 100, 1000)
RACED = (1, 10, 50, 100, 200)
TARGET_1MIB_S, TARGET_PER_KIB_RATIO = 10.0, 2.0
MISSING_PATHS = 2  # of the cited paths, the last ones are not in the checkout: stale items
CHILD_TIMEOUT_S = 600
MODEL = "github:openai/gpt-4.1-mini"


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


@contextmanager
def quiet() -> Iterator[None]:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        yield


# -- (a) maintenance --------------------------------------------------------------------------


def checkout(root: Path, **inputs: str) -> ActionRunner:
    """A maintenance runner over a git checkout of main with the files memory cites."""
    env = isolated_git_env(root / "home")
    os.environ.update(env)
    runner = ActionRunner(root, inputs={"mode": "maintenance", **inputs})
    repo = GitRepo(runner.workspace, env)
    repo.git("init", "--quiet", "--initial-branch=main")
    names = [symbol.removesuffix("()").rsplit(".", 1)[-1] for symbol in SYMBOLS]
    for path in PATHS[:-MISSING_PATHS]:
        body = "".join(f"def {name}():\n    return None\n\n" for name in names)
        repo.write(path, body if path.endswith(".py") else f"{' '.join(names)}\n")
    repo.commit("Start")
    return runner


def maintenance_cpu(root: Path, kib: int) -> tuple[float, int]:
    runner = checkout(root, max_memory_kb="1024", max_input_tokens="2000000")
    memory = memory_of(kib * 1024, seed=kib)
    with quiet():
        seed_without_digest(runner, memory)
        before = cpu()
        outcome, model = maintain(runner, "Nothing to change.")
        spent = cpu() - before
    if model.calls != 1 or "maintenance found" not in outcome.summary:
        raise SystemExit(f"the {kib} KiB maintenance run did not maintain as scripted")
    return spent, len(memory.encode())


def run_maintenance(work: Path) -> bool:
    print("(a) maintenance run (push to main), CPU by memory size")
    print(f"{'memory':>10}{'bytes':>10}{'CPU s':>9}{'ms/KiB':>9}{'vs 16 KiB':>11}")
    maintenance_cpu(work / "warm-up", 16)  # imports, caches: not part of any figure
    per_kib: dict[int, float] = {}
    spent: dict[int, float] = {}
    for kib in MEMORY_KIB:
        spent[kib], size = maintenance_cpu(work / f"memory-{kib}", kib)
        per_kib[kib] = spent[kib] / (size / 1024)
        ratio = per_kib[kib] / per_kib[MEMORY_KIB[0]]
        print(f"{kib:>7} KiB{size:>10}{spent[kib]:>9.2f}{per_kib[kib] * 1000:>9.2f}{ratio:>10.2f}x")
    largest = MEMORY_KIB[-1]
    ratio = per_kib[largest] / per_kib[MEMORY_KIB[0]]
    fast, gentle = spent[largest] <= TARGET_1MIB_S, ratio <= TARGET_PER_KIB_RATIO
    print(f"target: 1 MiB <= {TARGET_1MIB_S:g} s CPU: {spent[largest]:.2f} s ({_verdict(fast)})")
    print(
        f"target: CPU/KiB at 1 MiB <= {TARGET_PER_KIB_RATIO:g}x that at 16 KiB: {ratio:.2f}x "
        f"({_verdict(gentle)})"
    )
    return fast and gentle


# -- (b) pull requests ------------------------------------------------------------------------


def patch_of(number: int) -> str:
    return (
        f"@@ -1,3 +1,4 @@\n def handler_{number}(event):\n"
        f"+    log(event, {number})\n     return event\n \n"
    )


def pull_of(files: int) -> FakePullRequest:
    paths = [f"src/part_{n // 50}/module_{n}.py" for n in range(files)]
    return FakePullRequest(
        files=[changed_file(path, patch_of(n)) for n, path in enumerate(paths)],
        contents={
            path: f"def handler_{n}(event):\n    log(event, {n})\n    return event\n\n"
            for n, path in enumerate(paths)
        },
    )


@dataclass(frozen=True)
class ReviewRun:
    cpu_s: float
    exit_code: int
    requests: int
    reviewed: str


def review_cpu(work: Path, files: int) -> ReviewRun:
    fake = FakeGitHub()
    pull = fake.add_pull(pull_of(files))
    paths = [f["filename"] for f in pull.files]
    runner = ActionRunner(work)
    limits = FreeTier(per_minute=10_000, per_day=100_000)
    with GitHubHttpServer(fake) as github, GitHubModelsStub(paths, limits=limits) as stub:
        runner.inputs.update(model=MODEL, model_base_url=stub.base_url)
        runner.extra_env.update(GITHUB_API_URL=github.base_url)
        action = runner.env("pull_request", pull_request_event(), "refs/pull/7/merge")
        env = {**child_env(work), **action}
        before = children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "memory_action.cli", "run"],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
        spent = children_cpu() - before
        requests = len(stub.requests)
    outputs = parse_outputs(Path(action["GITHUB_OUTPUT"]).read_text())
    reviewed = outputs.get("files_reviewed", "")
    return ReviewRun(spent, done.returncode, requests, reviewed)


def run_pull_requests(work: Path) -> bool:
    print("\n(b) pull request review (child process), CPU by changed files")
    print(f"{'files':>7}{'CPU s':>9}{'exit':>6}{'requests':>10}{'reviewed':>10}{'ms/file':>9}")
    review_cpu(work / "pull-warm-up", 1)  # bytecode and page caches: not part of any figure
    first: ReviewRun | None = None
    ok = True
    for files in PR_FILES:
        run = review_cpu(work / f"pull-{files}", files)
        first = first or run
        extra = (run.cpu_s - first.cpu_s) / (files - 1) * 1000 if files > 1 else 0.0
        per_file = f"{extra:>9.2f}" if files > 1 else f"{'':>9}"
        print(
            f"{files:>7}{run.cpu_s:>9.2f}{run.exit_code:>6}{run.requests:>10}{run.reviewed:>10}{per_file}"
        )
        ok = ok and run.exit_code == 0
    print("ms/file: CPU beyond the 1-file run (start-up, one review) per further file")
    return ok


# -- (c) raced entries ------------------------------------------------------------------------

HEADING = "# Facts\n"


def raced_cpu(root: Path, entries: int) -> tuple[float, int]:
    runner = checkout(root)
    with quiet():
        seeded, _ = maintain(runner, write(HEADING), "Seeded.")
    key = seeded.outputs["saved_key"]
    prefix = key[: key.rindex("/") + 1]
    store = LocalDirectoryStore(runner.store_dir)
    facts = [f"- Fact number {n} learned by run {n}." for n in range(entries)]
    for number, fact in enumerate(facts):
        folder = root / "entries" / str(number)
        state = EntryState(layer="committed", base=HEADING, parents=(key,))
        write_entry(folder, f"{HEADING}{fact}\n", state, Provenance(records={}))
        if not store.save(f"{prefix}{5000 + number}-1-review-{number:08x}", folder).saved:
            raise SystemExit(f"entry {number} was not saved")
    with quiet():
        before = cpu()
        _, model = maintain(runner, "Nothing to add.")
        spent = cpu() - before
    kept = sum(1 for fact in facts if fact in model.system_prompts[0])
    return spent, kept


def run_raced(work: Path) -> bool:
    print("\n(c) entries that raced: one run restores and merges them all, CPU by entries")
    print(f"{'entries':>8}{'CPU s':>9}{'kept':>8}{'ms/entry':>10}")
    with quiet():
        raced_cpu(work / "raced-warm-up", 1)
    ok, first = True, 0.0
    for entries in RACED:
        spent, kept = raced_cpu(work / f"raced-{entries}", entries)
        first = first or spent
        extra = (spent - first) / (entries - 1) * 1000 if entries > 1 else 0.0
        per_entry = f"{extra:>10.2f}" if entries > 1 else f"{'':>10}"
        print(f"{entries:>8}{spent:>9.2f}{kept:>5}/{entries:<3}{per_entry}")
        ok = ok and kept == entries
    print("ms/entry: CPU beyond the 1-entry run per further entry")
    return ok


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


PARTS: dict[str, Callable[[Path], bool]] = {
    "maintenance": run_maintenance,
    "pull_requests": run_pull_requests,
    "raced": run_raced,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default=",".join(PARTS), help="parts to run, comma separated")
    args = parser.parse_args(argv)
    wanted = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in PARTS]
    if unknown:
        parser.error(
            f"--only: unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}"
        )
    began = time.monotonic()
    ok = True
    with (
        tempfile.TemporaryDirectory(prefix="memory-agent-scaling-") as temp,
        FakeGitHub().serve(),  # what an in-process run asks GitHub (merged pull requests)
    ):
        for name in wanted:
            ok = PARTS[name](Path(temp) / name) and ok
    print(f"\nbenchmark wall time: {time.monotonic() - began:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
