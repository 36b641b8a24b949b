"""How many facts survive when trusted runs race to save repository memory, for each permission
the workflow's token may have on the cache REST API (``actions: write``, ``read``, none).

Run: ``python bench/concurrency.py [--runs N] [--store cache|git]``. Each run is the real
pipeline against one local fake Actions cache service (127.0.0.1); a barrier makes every run
restore the same memory before any saves. Printed, per permission: facts kept with
memory-agent's merging, and with newest-entry-wins (what a client that restores only the newest
entry keeps), measured in the same process; entries left in the cache; the downloads of the run
that reads what they left; seconds.
With ``--store git`` committed memory lives on the fake repository's memory branch instead:
printed are the facts kept, the memory commits and the GitHub calls per save.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.cache_harness import default_tuning
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.concurrency import MAIN_REF, PERMISSIONS, RACE_TUNING, RaceResult, race
from tests.fakes.github_api import FakeGitHub


def measure(
    runs: int, *, lossless: bool, actions: str, store: str = "cache"
) -> tuple[RaceResult, float]:
    started = time.monotonic()
    github = FakeGitHub()
    with (
        tempfile.TemporaryDirectory() as root,
        FakeCacheService([MAIN_REF]) as service,
        default_tuning(RACE_TUNING),  # timeouts no local answer reaches, even under load
        github.serve(),
    ):
        result = race(
            Path(root), service, github, runs=runs, lossless=lossless, actions=actions, store=store
        )
    return result, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--store", choices=("cache", "git"), default="cache")
    args = parser.parse_args()
    runs = args.runs
    if args.store == "git":
        return _git(runs)
    print(f"{runs} trusted runs racing to add one fact each to repository memory")
    header = f"{'actions:':<10}{'mode':<26}{'facts kept':>12}{'entries left':>14}"
    print(f"{header}{'reader downloads':>18}{'seconds':>10}")
    for actions in PERMISSIONS:
        for label, lossless in (("memory-agent (merging)", True), ("newest entry wins", False)):
            result, seconds = measure(runs, lossless=lossless, actions=actions)
            kept = f"{result.facts_kept}/{runs}"
            row = f"{actions:<10}{label:<26}{kept:>12}{result.entries_left:>14}"
            print(f"{row}{result.reader_downloads:>18}{seconds:>10.1f}")
    return 0


def _git(runs: int) -> int:
    print(f"{runs} trusted runs racing to add one fact each to repository memory on git")
    result, seconds = measure(runs, lossless=True, actions="write", store="git")
    per_save = result.git_calls / runs
    print(f"facts kept {result.facts_kept}/{runs}; {result.commits} commits for {runs} saves")
    print(f"GitHub calls for memory: {result.git_calls} ({per_save:.1f} per save); {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
