"""How long memory-agent takes to start, and that LangChain is imported only when it is used.

    python bench/startup.py [--repeat N]

Every scenario is a fresh ``python`` process (this interpreter), run N times (default 7) after
one untimed warm-up run; the table gives the median and the minimum in milliseconds, and the
ratio of the median to bare ``python -c pass`` measured in the same session:

    (a) python -c pass            the floor: interpreter start and exit
    (b) cli --help                python -m memory_action.cli --help
    (c) unhandled event           entrypoint.py on a ``release`` event: a notice, exit 0
    (d) pull request run          entrypoint.py on a pull request, end to end, against a fake
                                  GitHub API and the OpenAI-compatible stub on 127.0.0.1 (three
                                  scripted model replies), memory in a temporary local store;
                                  timed to the first request either server receives, and to exit
    (e) import the agent stack    python -c "import memory_action.review.session": what (b) and
                                  (c) must not pay

(a) to (d) then run once more under ``python -X importtime``, which lists what was imported:
LangChain (and PyGithub, the OpenAI SDK) must be absent from (b) and (c), which must also send
no request; the exit code is 1 when they do. Nothing leaves 127.0.0.1.

Last, the calls each kind of run makes (``tests/fakes/call_counts.py``: in-process runs with the
Actions cache store against the fake cache service and the fake GitHub API, a pull request of 100
changed files): GitHub REST and GraphQL calls, cache lookups and blob downloads, against the
target of issue 18 (at most 8 REST calls for a pull request run, held for every kind of run); the
exit code is 1 when a run misses its target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_action.evaluation.local_server import LocalServer, send_json  # noqa: E402
from tests.fakes.github_api import (  # noqa: E402 - needs ROOT on sys.path
    FETCH_PATCH,
    HEAD_SHA,
    REPOSITORY,
    FakePullRequest,
    changed_file,
    pulljson_reply,
    repositoryjson_reply,
)
from tests.fakes.openai_stub import OpenAIStub, answer_reply, tool_call_reply  # noqa: E402
from tests.fakes.runner import ACTION_DEFAULTS, child_env, pull_request_event  # noqa: E402

PR_NUMBER = 7
CHILD_TIMEOUT_S = 60
HEAVY_MODULES = ("langchain", "langchain_core", "langgraph", "openai", "github")


# -- servers on 127.0.0.1 ---------------------------------------------------------------------


@dataclass
class Arrivals:
    """``time.monotonic()`` of every request any local server received."""

    times: list[float] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, method: str, path: str) -> None:
        now = time.monotonic()
        with self.lock:
            self.times.append(now)
            self.paths.append(f"{method} {path}")

    def clear(self) -> None:
        with self.lock:
            self.times.clear()
            self.paths.clear()

    def first_after(self, start: float) -> float | None:
        with self.lock:
            later = [t for t in self.times if t >= start]
        return min(later) if later else None


class FakeGitHubServer(LocalServer):
    """The few REST endpoints a pull request run calls, as PyGithub requests them.

    The payloads of ``tests/fakes/github_api.py`` (which answers in-process only, through
    ``responses``); stateless: every run finds no comment yet and creates one.
    """

    def __init__(self, arrivals: Arrivals) -> None:
        super().__init__(self._handler(arrivals))
        self.unknown: list[str] = []

    def answer(self, method: str, path: str, body: bytes = b"") -> tuple[int, Any]:
        if method == "POST" and path == "/graphql":
            return 200, _graphql(body)
        repo_path = f"/repos/{REPOSITORY}"
        base = f"{self.base_url}{repo_path}"
        if method == "GET" and path.startswith(f"{repo_path}/contents/"):
            return 404, {"message": "Not Found"}  # no file is read in this review
        pull = FakePullRequest(number=PR_NUMBER)
        files = [changed_file("src/fetch.py", FETCH_PATCH)]
        routes: dict[tuple[str, str], tuple[int, Any]] = {
            ("GET", ""): (200, repositoryjson_reply(base)),
            # The actor may write: a trusted run saves its memory.
            ("GET", "/collaborators/mona/permission"): (200, _permission("mona", "write")),
            ("GET", f"/pulls/{PR_NUMBER}"): (200, pulljson_reply(pull, base)),
            ("GET", f"/pulls/{PR_NUMBER}/files"): (200, files),
            ("GET", f"/issues/{PR_NUMBER}"): (200, {"number": PR_NUMBER}),
            ("GET", f"/issues/{PR_NUMBER}/comments"): (200, []),
            ("GET", f"/pulls/{PR_NUMBER}/comments"): (200, []),  # no inline comment yet
            ("POST", f"/issues/{PR_NUMBER}/comments"): (201, _comment(base)),
        }
        rest = path.removeprefix(repo_path) if path.startswith(repo_path) else None
        answer = routes.get((method, rest)) if rest is not None else None
        if answer is None:
            self.unknown.append(f"{method} {path}")
            return 404, {"message": "Not Found"}
        return answer

    def _handler(self, arrivals: Arrivals) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                path = unquote(urlsplit(self.path).path)
                arrivals.record(self.command, path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, payload = server.answer(self.command, path, body)
                send_json(self, status, payload)

            do_GET = do_POST = do_PATCH = _serve  # noqa: N815 - http.server's naming

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        return Handler


def _graphql(body: bytes) -> dict[str, Any]:
    """Who the token is (the workflow token's bot), no file at the base commit (as the contents
    API answers), and no review threads yet."""
    request = json.loads(body or b"{}")
    query = str(request.get("query", ""))
    if "BaseFiles" in query:
        paths = [name for name in request.get("variables", {}) if re.fullmatch(r"p\d+", name)]
        files = {f"f{name[1:]}": None for name in paths}
        return {"data": {"repository": {"object": {"__typename": "Commit", **files}}}}
    if "viewer" in query:
        return {"data": {"viewer": {"__typename": "Bot", "login": "github-actions"}}}
    threads = {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
    return {"data": {"repository": {"pullRequest": {"reviewThreads": threads}}}}


def _permission(login: str, permission: str) -> dict[str, Any]:
    return {"permission": permission, "role_name": permission, "user": {"login": login}}


def _comment(base: str) -> dict[str, Any]:
    return {
        "id": 1001,
        "url": f"{base}/issues/comments/1001",
        "html_url": f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}#issuecomment-1001",
        "body": "",
        "user": {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"},
    }


class RecordingStub(OpenAIStub):
    """The tests' OpenAI-compatible stub, also noting when each request arrives."""

    def __init__(self, arrivals: Arrivals) -> None:
        super().__init__()
        handler = self._server.RequestHandlerClass
        original = handler.do_POST  # type: ignore[attr-defined]

        def do_post(request: BaseHTTPRequestHandler) -> None:
            arrivals.record("POST", request.path)
            original(request)

        handler.do_POST = do_post  # type: ignore[attr-defined]


def script() -> list[dict[str, Any]]:
    """One review: the diff comes in the first request; write a lesson to memory, answer."""
    lesson = {"file_path": ".agent-memory/AGENTS.md", "content": "- Retries use tenacity.\n"}
    return [
        tool_call_reply("write_file", lesson, call_id="call_1"),
        answer_reply("The retry loop returns on the first attempt."),
    ]


# -- runs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    argv: list[str]
    env: dict[str, str]
    prepare: Callable[[int], None] = lambda _: None  # called before each run with its number
    network: bool = False  # report the time to the first request


@dataclass
class Figures:
    totals_ms: list[float] = field(default_factory=list)
    first_request_ms: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)


def action_env(work: Path, event_name: str, event: dict[str, Any], **inputs: str) -> dict[str, str]:
    """What the runner gives the action's container: INPUT_*, GITHUB_*, the event file."""
    work.mkdir(parents=True, exist_ok=True)
    event_path = work / f"{event_name}.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    for name in ("output", "summary"):
        (work / name).touch()
    (work / "workspace").mkdir(exist_ok=True)
    values = {**ACTION_DEFAULTS, **inputs}
    return child_env(
        work,
        **{f"INPUT_{name.upper()}": value for name, value in values.items()},
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME=event_name,
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_REPOSITORY=REPOSITORY,
        GITHUB_REF=f"refs/pull/{PR_NUMBER}/merge",
        GITHUB_SHA=HEAD_SHA,
        GITHUB_RUN_ID="1000",
        GITHUB_RUN_ATTEMPT="1",
        GITHUB_ACTOR="mona",
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_WORKSPACE=str(work / "workspace"),
        GITHUB_OUTPUT=str(work / "output"),
        GITHUB_STEP_SUMMARY=str(work / "summary"),
        RUNNER_TEMP=str(work),
        LANGSMITH_TRACING="false",
    )


def run_once(scenario: Scenario, arrivals: Arrivals, number: int, work: Path) -> Figures:
    scenario.prepare(number)
    arrivals.clear()
    start = time.monotonic()
    child = subprocess.Popen(
        scenario.argv,
        env=scenario.env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        message = f"{scenario.name}: no exit after {CHILD_TIMEOUT_S} s\n{err.decode()}"
        raise SystemExit(message) from None
    end = time.monotonic()
    if child.returncode != 0:
        log = (out + err).decode(errors="replace")
        raise SystemExit(f"{scenario.name}: exit code {child.returncode}\n{log}")
    figures = Figures(totals_ms=[(end - start) * 1000], requests=[len(arrivals.times)])
    first = arrivals.first_after(start)
    if first is not None:
        figures.first_request_ms.append((first - start) * 1000)
    return figures


def measure(scenario: Scenario, arrivals: Arrivals, repeat: int, work: Path) -> Figures:
    run_once(scenario, arrivals, 0, work)  # warm-up: bytecode caches, the page cache
    figures = Figures()
    for number in range(1, repeat + 1):
        one = run_once(scenario, arrivals, number, work)
        figures.totals_ms += one.totals_ms
        figures.first_request_ms += one.first_request_ms
        figures.requests += one.requests
    return figures


def check_pull_request_run(paths: Sequence[str], outputs: Path) -> None:
    """The last run really reviewed: three model calls, a comment posted, memory saved."""
    model_calls = paths.count("POST /v1/chat/completions")
    commented = f"POST /repos/{REPOSITORY}/issues/{PR_NUMBER}/comments" in paths
    saved = re.search(r"^saved_key<<(\S+)\n.+\n\1$", outputs.read_text(), re.MULTILINE)
    if model_calls != len(script()) or not commented or not saved:
        raise SystemExit(f"the pull request run did not review as scripted; requests: {paths}")


def heavy_imports(scenario: Scenario, arrivals: Arrivals, work: Path) -> list[str]:
    """The heavy top-level packages the scenario imports, from ``-X importtime``'s report."""
    scenario.prepare(-1)
    arrivals.clear()
    done = subprocess.run(
        [scenario.argv[0], "-X", "importtime", *scenario.argv[1:]],
        env=scenario.env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{scenario.name} (-X importtime): exit code {done.returncode}")
    imported = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            module = line.rsplit("|", 1)[1].strip()
            imported.add(module.split(".")[0])
    return [name for name in HEAVY_MODULES if name in imported]


# -- report -----------------------------------------------------------------------------------


def ms(value: float) -> str:
    return f"{value:9.1f}"


def row(label: str, values: Sequence[float], bare_median: float) -> str:
    median, least = statistics.median(values), min(values)
    return f"{label:<38}{ms(median)}{ms(least)}{median / bare_median:9.1f}x"


@contextmanager
def servers() -> Iterator[tuple[Arrivals, FakeGitHubServer, RecordingStub]]:
    arrivals = Arrivals()
    github, stub = FakeGitHubServer(arrivals), RecordingStub(arrivals)
    with ExitStack() as stack:
        stack.enter_context(github)
        stack.enter_context(stub)
        yield arrivals, github, stub


def scenarios(work: Path, github: FakeGitHubServer, stub: RecordingStub) -> dict[str, Scenario]:
    python, entrypoint = sys.executable, str(ROOT / "entrypoint.py")
    model = {"model": "openai:stub", "model_base_url": stub.url("/v1"), "model_api_key": "sk-x"}
    unhandled = {"action": "published", "repository": {"full_name": REPOSITORY}}
    release = action_env(work / "release", "release", unhandled, **model)
    release["GITHUB_API_URL"] = github.base_url  # so a request would be seen, were one made
    pull_request = action_env(
        work / "pull_request", "pull_request", pull_request_event(PR_NUMBER), **model
    )
    pull_request["GITHUB_API_URL"] = github.base_url

    def fresh_store(number: int) -> None:
        # Every run starts from no memory, learns one lesson and saves it: the same work.
        pull_request["MEMORY_AGENT_STORE_DIR"] = str(work / "pull_request" / f"store-{number}")
        for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
            Path(pull_request[name]).write_text("")
        stub.add_replies(*script())

    plain = child_env(work)
    return {
        "bare": Scenario("python -c pass", [python, "-c", "pass"], plain),
        "help": Scenario(
            "python -m memory_action.cli --help",
            [python, "-m", "memory_action.cli", "--help"],
            plain,
        ),
        "unhandled": Scenario("entrypoint.py, unhandled event", [python, entrypoint], release),
        "pr": Scenario(
            "entrypoint.py, pull request run",
            [python, entrypoint],
            pull_request,
            prepare=fresh_store,
            network=True,
        ),
        "agent": Scenario(
            "import memory_action.review.session",
            [python, "-c", "import memory_action.review.session"],
            plain,
        ),
    }


@dataclass
class Report:
    repeat: int
    names: dict[str, str]
    results: dict[str, Figures]
    heavy: dict[str, list[str]]


def run_all(repeat: int) -> Report:
    with (
        tempfile.TemporaryDirectory(prefix="memory-agent-bench-") as temp,
        servers() as (arrivals, github, stub),
    ):
        work = Path(temp)
        planned = scenarios(work, github, stub)
        results = {}
        for key, scenario in planned.items():
            results[key] = measure(scenario, arrivals, repeat, work)
            if scenario.network:
                outputs = Path(scenario.env["GITHUB_OUTPUT"])
                check_pull_request_run(arrivals.paths, outputs)
        heavy = {
            key: heavy_imports(scenario, arrivals, work)
            for key, scenario in planned.items()
            if key != "agent"
        }
        if github.unknown:
            raise SystemExit(f"the fake GitHub API was asked for: {sorted(set(github.unknown))}")
    names = {key: scenario.name for key, scenario in planned.items()}
    return Report(repeat, names, results, heavy)


def print_report(report: Report) -> bool:
    """Print the tables; False when a run that needs no model was not kept light."""
    results, heavy = report.results, report.heavy
    bare = statistics.median(results["bare"].totals_ms)
    print(
        f"memory-agent startup: {report.repeat} runs per scenario after a warm-up, "
        f"Python {sys.version.split()[0]}, {os.cpu_count() or 1} CPUs"
    )
    print(f"{'':<38}{'median':>9}{'min':>9}{'vs bare':>10}")
    print(f"{'':<38}{'ms':>9}{'ms':>9}")
    print(row("(a) python -c pass: exit", results["bare"].totals_ms, bare))
    print(row("(b) cli --help: exit", results["help"].totals_ms, bare))
    print(row("(c) unhandled event: exit", results["unhandled"].totals_ms, bare))
    pr = results["pr"]
    print(row("(d) pull request run: first request", pr.first_request_ms, bare))
    print(row("(d) pull request run: exit", pr.totals_ms, bare))
    print(row("(e) import the agent stack: exit", results["agent"].totals_ms, bare))
    print()
    light = ("help", "unhandled")
    for key, label in zip(light, ("(b)", "(c)"), strict=True):
        print(f"{label} network requests: {sum(results[key].requests)}")
    print(f"(d) requests per run (GitHub API + model): {statistics.median(pr.requests):.0f}")
    print()
    print(f"{'-X importtime: imported':<38}{'LangChain':>10}  (of {', '.join(HEAVY_MODULES)})")
    for key, label in (("bare", "(a)"), ("help", "(b)"), ("unhandled", "(c)"), ("pr", "(d)")):
        langchain = "yes" if {"langchain", "langchain_core"} & set(heavy[key]) else "no"
        found = ", ".join(heavy[key]) or "none"
        print(f"{label + ' ' + report.names[key]:<38}{langchain:>10}  {found}")
    return not any(heavy[key] or sum(results[key].requests) for key in light)


def print_calls() -> bool:
    """Print the calls per kind of run; False when one is over its target."""
    from tests.fakes.call_counts import count_runs  # noqa: PLC0415 - loads LangChain

    runs = count_runs(files=100)
    print(
        f"\n{'calls per run (100 changed files)':<38}{'REST':>6}{'target':>8}"
        f"{'GraphQL':>9}{'lookups':>9}{'downloads':>11}"
    )
    kept = True
    for run in runs:
        target = f"<= {run.target}" if run.target is not None else "-"
        missed = run.target is not None and run.rest > run.target
        kept = kept and not missed and run.exit_code == 0
        verdict = "" if run.target is None else "  MISSED" if missed else "  met"
        print(
            f"{run.kind:<38}{run.rest:>6}{target:>8}{run.graphql:>9}{run.cache_lookups:>9}"
            f"{run.downloads:>11}{verdict}"
        )
    return kept


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per scenario (7)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    began = time.monotonic()
    kept_light = print_report(run_all(args.repeat))
    kept_targets = print_calls()
    print(f"\nbenchmark wall time: {time.monotonic() - began:.1f} s")
    if not kept_light:
        print("FAIL: a run that needs no model imported a heavy package or used the network")
        return 1
    if not kept_targets:
        print("FAIL: a run made more REST calls than its target (or failed)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
