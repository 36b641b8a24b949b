"""How many facts survive when 20 trusted runs race to save repository memory.

Run: ``python bench/concurrency.py [--runs N]``. Each run is the real pipeline against one local
fake Actions cache service (127.0.0.1); a barrier makes every run restore the same memory before
any saves. Printed: facts kept with memory-agent's merging, and with newest-entry-wins (what a
client that restores only the newest entry keeps), measured in the same process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.cache_harness import default_tuning, fast_tuning
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.concurrency import MAIN_REF, race
from tests.fakes.github_api import FakeGitHub


def measure(runs: int, *, lossless: bool) -> tuple[int, int, float]:
    started = time.monotonic()
    github = FakeGitHub()
    with (
        tempfile.TemporaryDirectory() as root,
        FakeCacheService([MAIN_REF]) as service,
        default_tuning(fast_tuning([])),
        github.serve(),
    ):
        result = race(Path(root), service, github, runs=runs, lossless=lossless)
    return result.facts_kept, result.entries_left, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    print(f"{runs} trusted runs racing to add one fact each to repository memory")
    print(f"{'mode':<28}{'facts kept':>12}{'entries left':>14}{'seconds':>10}")
    for label, lossless in (("memory-agent (merging)", True), ("newest entry wins", False)):
        kept, left, seconds = measure(runs, lossless=lossless)
        print(f"{label:<28}{f'{kept}/{runs}':>12}{left:>14}{seconds:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
