"""The Docker image's runtime layer, measured without Docker: its size, and what bytecode buys.

    python bench/image.py [--python PYTHON] [--repeat N]

Builds, in a temporary folder, the virtual environment the image ships with the very script the
Dockerfile runs (``scripts/runtime-venv``, with PYTHON, default this interpreter; the Dockerfile
uses Debian 12's ``/usr/bin/python3.11``, the distroless runtime's: pass that one on Debian 12 to
measure the image's own tree), then measures:

- sizes: the installed files (what the image's venv layer holds), the bytecode a run needs (what
  ``scripts/precompile.py``, the Dockerfile's last step, writes: the modules a pull request run
  imports, standard library included) and the bytecode of every installed module (``compileall``);
- start-up, each a fresh process timed N times after a warm-up, in three states of bytecode: none
  (the base image deletes every ``.pyc``: everything is compiled at every start, standard library
  included), what a run needs, and everything. Rows: ``python -c pass``, importing the agent stack
  (``memory_action.review.session``: LangChain, langgraph, the model SDKs) and a whole pull request
  run (``bench/startup.py``'s scenario (d), against its fake GitHub API and model stub on
  127.0.0.1). The ratio column divides by ``python -c pass`` with the run's bytecode;
- coverage: the modules a pull request run still compiled with the run's bytecode in place (0 when
  ``precompile.py`` misses nothing on that path).

Each state is a ``PYTHONPYCACHEPREFIX`` folder, so the checkout and the interpreter's own
``__pycache__`` folders are never read nor written. Installing needs the package index (pip).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.startup import (  # noqa: E402 - needs ROOT on sys.path
    Arrivals,
    Scenario,
    check_pull_request_run,
    measure,
    scenarios,
    servers,
)
from tests.fakes.runner import child_env  # noqa: E402

AGENT_STACK = "import memory_action.review.session"
# The container's entry point (entrypoint.py) without the checkout on sys.path: the venv's package.
RUN_ACTION = "import sys; from memory_action.main import main; sys.exit(main())"
STATES = ("none", "run", "all")  # no bytecode, what a run imports, every installed module
MB = 1_000_000


def tree_bytes(root: Path) -> int:
    """Bytes of the files under ``root`` as a layer stores them (symlinks count as themselves)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            total += (Path(folder) / name).lstat().st_size
    return total


def pyc_bytes(prefix: Path, under: Path) -> int:
    """Bytes of the bytecode in the cache ``prefix`` for sources under ``under``."""
    mirrored = prefix / under.resolve().relative_to(under.resolve().anchor)
    return tree_bytes(mirrored) if mirrored.exists() else 0


def run(argv: Sequence[str], env: dict[str, str]) -> None:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit code {done.returncode}\n{done.stderr[-3000:]}")


@dataclasses.dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def site_packages(self) -> Path:
        return Path(self.query("import sysconfig; print(sysconfig.get_paths()['purelib'])"))

    def stdlib(self) -> Path:
        return Path(self.query("import sysconfig; print(sysconfig.get_paths()['stdlib'])"))

    def query(self, code: str) -> str:
        done = subprocess.run([self.python, "-c", code], capture_output=True, text=True, check=True)
        return done.stdout.strip()


def build_venv(python: str, where: Path) -> Venv:
    env = {**os.environ, "PYTHON": python}
    run([str(ROOT / "scripts" / "runtime-venv"), str(where)], env)
    return Venv(where)


def state_env(base: dict[str, str], prefix: Path, *, write: bool = False) -> dict[str, str]:
    """``base`` reading bytecode only from ``prefix``; nothing written unless ``write``."""
    env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def compile_states(venv: Venv, caches: dict[str, Path], plain: dict[str, str]) -> None:
    for state in STATES:
        caches[state].mkdir()
    precompile = str(ROOT / "scripts" / "precompile.py")
    for state in ("run", "all"):
        run([venv.python, precompile], state_env(plain, caches[state]))
    everything = [venv.python, "-m", "compileall", "-q", "-j0"]
    everything += ["--invalidation-mode", "unchecked-hash", str(venv.site_packages())]
    run(everything, state_env(plain, caches["all"]))


@dataclasses.dataclass
class Timings:
    bare: dict[str, float] = dataclasses.field(default_factory=dict)
    agent: dict[str, float] = dataclasses.field(default_factory=dict)
    pr_run: dict[str, float] = dataclasses.field(default_factory=dict)
    missed: list[str] = dataclasses.field(default_factory=list)


def time_states(venv: Venv, caches: dict[str, Path], repeat: int, work: Path) -> Timings:
    timings = Timings()
    with servers() as (arrivals, github, stub):
        planned = scenarios(work, github, stub)
        pr = dataclasses.replace(planned["pr"], argv=[venv.python, "-c", RUN_ACTION])
        pr_env = dict(pr.env)  # its prepare() writes the store folder into pr.env: keep the dict
        plain = child_env(work)
        for state in STATES:
            env = state_env(plain, caches[state])
            bare = Scenario("python -c pass", [venv.python, "-c", "pass"], env)
            agent = Scenario(AGENT_STACK, [venv.python, "-c", AGENT_STACK], env)
            pr.env.clear()
            pr.env.update(state_env(pr_env, caches[state]))
            forget_memory(work)
            timings.bare[state] = median_ms(measure(bare, arrivals, repeat, work).totals_ms)
            timings.agent[state] = median_ms(measure(agent, arrivals, repeat, work).totals_ms)
            timings.pr_run[state] = median_ms(measure(pr, arrivals, repeat, work).totals_ms)
            check_pull_request_run(arrivals.paths, Path(pr.env["GITHUB_OUTPUT"]))
        timings.missed = modules_a_run_compiles(pr, pr_env, caches["run"], arrivals, work)
    return timings


def forget_memory(work: Path) -> None:
    """Remove what earlier runs saved: every run must start without memory and save a lesson."""
    for store in (work / "pull_request").glob("store-*"):
        shutil.rmtree(store)


def modules_a_run_compiles(
    pr: Scenario, pr_env: dict[str, str], run_cache: Path, arrivals: Arrivals, work: Path
) -> list[str]:
    """The bytecode files one pull request run writes on top of what ``precompile.py`` wrote."""
    written = work / "pyc-written"
    shutil.copytree(run_cache, written)
    before = set(written.rglob("*.pyc"))
    pr.env.clear()
    pr.env.update(state_env(pr_env, written, write=True))
    forget_memory(work)
    measure(pr, arrivals, 1, work)
    return sorted(module_name(path) for path in set(written.rglob("*.pyc")) - before)


def module_name(pyc: Path) -> str:
    """``.../site-packages/h11/__pycache__/_util.cpython-311.pyc`` -> ``h11._util``."""
    parts = [part for part in pyc.parts if part != "__pycache__"]
    tail, folders = parts[-1].split(".")[0], parts[:-1]
    for index in range(len(folders) - 1, -1, -1):
        if folders[index] == "site-packages" or folders[index].startswith("python3."):
            folders = folders[index + 1 :]
            break
    return ".".join([*folders, tail]).removesuffix(".__init__")


def median_ms(values: Sequence[float]) -> float:
    return statistics.median(values)


def largest_distributions(site_packages: Path, count: int) -> list[tuple[str, int]]:
    sizes = {entry.name: tree_bytes(entry) for entry in site_packages.iterdir() if entry.is_dir()}
    return sorted(sizes.items(), key=lambda item: item[1], reverse=True)[:count]


def report(venv: Venv, caches: dict[str, Path], timings: Timings, repeat: int) -> None:
    installed = tree_bytes(venv.root)
    site, stdlib = venv.site_packages(), venv.stdlib()
    version = venv.query("import sys; print(sys.version.split()[0])")
    print(f"memory-agent image layer: Python {version}, {repeat} runs a row after a warm-up")
    print(f"\n{'size':<52}{'MB':>8}")
    print(f"{'installed files (venv, stripped, no bytecode)':<52}{installed / MB:8.1f}")
    for state, label in (("run", "what a run imports"), ("all", "every installed module")):
        venv_pyc, std_pyc = pyc_bytes(caches[state], site), pyc_bytes(caches[state], stdlib)
        sizes = f"{venv_pyc / MB:8.1f} / {std_pyc / MB:.1f}"
        print(f"{'bytecode, ' + label + ': venv / stdlib':<52}{sizes}")
    run_layer = installed + pyc_bytes(caches["run"], site) + pyc_bytes(caches["run"], stdlib)
    print(f"{'runtime layers as shipped (installed + run bytecode)':<52}{run_layer / MB:8.1f}")
    floor = timings.bare["run"]
    print(f"\n{'start-up, median ms (vs python -c pass)':<40}{'none':>14}{'run':>14}{'all':>14}")
    for label, row in (
        ("python -c pass", timings.bare),
        ("import the agent stack", timings.agent),
        ("a pull request run, start to exit", timings.pr_run),
    ):
        cells = "".join(f"{row[s]:8.0f} {row[s] / floor:4.1f}x" for s in STATES)
        print(f"{label:<40}{cells}")
    missed = timings.missed
    print(f"\nmodules a pull request run compiled despite the run bytecode: {len(missed)}")
    if missed:
        print(f"  add to scripts/precompile.py's RUN_MODULES: {', '.join(missed[:40])}")
    print("\nlargest installed packages, MB:")
    for name, size in largest_distributions(site, 8):
        print(f"  {name:<30}{size / MB:6.1f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter to build with")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs a row (5)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memory-agent-image-") as temp:
        work = Path(temp)
        venv = build_venv(args.python, work / "venv")
        caches = {state: work / f"pyc-{state}" for state in STATES}
        compile_states(venv, caches, child_env(work))
        timings = time_states(venv, caches, args.repeat, work)
        report(venv, caches, timings, args.repeat)
    print(f"\nbenchmark wall time: {time.monotonic() - began:.1f} s")
    return 0 if not timings.missed else 1


if __name__ == "__main__":
    sys.exit(main())
