"""Do reviews fit GitHub Models' free tier, near the token floor? Six real pull requests and a
synthetic one of 100 files, the window counted by the model's tokenizer (o200k, as OpenAI counts
a chat request: ``github_models_stub.openai_request_tokens``), and at 4 and at 3 characters a
token over the request's JSON (a provider whose count the engine does not know).

    python bench/review_fit.py [--only TAG] [--engines baseline,current] [--model-seconds S]
                               [--chars-per-token o200k,4,3] [--verbose]

The floor of a review (issue 19) is the compressed diff sent once plus one system prompt with
memory per request, for the fewest requests that could hold the diff: the diff as this checkout
renders the files it would review (3 lines of context), the system prompt as the first request
carried it, both counted as the stub counts (o200k, or ``chars_per_token`` over the JSON).
Printed per pull request: the floor, those fewest requests, tokens in over the floor, and how
full the first request and the least full later one (the last aside) were; then the targets: at
most 1.3 times the floor on every pull request, no request over the window, none refused as too
large (413), later batches at least 90% full; and per pull request whether it met the first two
(``<= 1.3``: met or missed). The synthetic pull request is ``bench/synthetic_pull.py``; the
stub's count is ``FreeTier.encoding`` or ``FreeTier.chars_per_token``. The inline reviews' three
runs are made at the first count only. The model is gpt-4.1-mini, which the engine counts
exactly (o200k); a stub that counts characters of the JSON counts what the engine does not know.

Each pull request of the click corpus (``tests/fakes/click_corpus.py``: the bundle
``../shared/corpus/click-prs.bundle``) is reviewed by the whole action in a child process (``python
-m memory_action.cli run``, a ``pull_request`` event, ``INPUT_*``/``GITHUB_*`` as the runner sets
them, memory on with a local store), against two servers on 127.0.0.1: the GitHub REST fake
(``memory_action.evaluation.github.http``) serving the pull request from ``git diff base...head``,
and the GitHub Models stub (``tests/fakes/github_models_stub.py``): free-tier limits (8,000 tokens
in, 15 requests a minute, 150 a day; a fresh day for every review) and a diligent reviewer that
asks for every changed file it has not seen. The stub's minute runs on a clock that also moves
``--model-seconds`` (default 4) per answer, as a real model's latency would. The checkout has an
``AGENTS.md`` of ``--agents-kb`` KiB (default 4; the start of click's own CONTRIBUTING.rst, real
prose), which the action injects as read-only memory, as a repository's instructions are.

Engines: ``baseline`` is the code at BASELINE (before the token-budgeted engine), extracted with
``git archive``; ``current`` is this checkout. Printed per pull request and engine: files, diff
size, model requests, the largest request and the tokens in (answered requests), files reviewed
/ skipped (the action's outputs when it has them, else the files the stub saw when a comment was
posted), the outcome and whether a comment was posted; for the current engine also its inline
reviews over three runs of the same pull request (opened, then synchronize twice at the same
head: the ledger must keep the model's repeated findings from being posted again): inline
comments posted, reviews the fake GitHub refused with 422 (an anchor GitHub would not take),
findings posted twice, and the GitHub API calls of the inline review per run (feedback, compare,
posting); then the issue's targets.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.synthetic_pull import synthetic_pull  # noqa: E402
from memory_action.evaluation.github.http import GitHubHttpServer  # noqa: E402
from memory_action.model.tokenizer import O200K, shared  # noqa: E402
from tests.fakes.click_corpus import (  # noqa: E402 - needs ROOT on sys.path
    ClickCorpus,
    CorpusPull,
    bundle_path,
    load_corpus,
)
from tests.fakes.github_api import FakeGitHub  # noqa: E402
from tests.fakes.github_models_stub import (  # noqa: E402
    FreeTier,
    GitHubModelsStub,
)
from tests.fakes.runner import ActionRunner, child_env, parse_outputs, pull_request_event  # noqa: E402

BASELINE = "5913e56"  # main before issue 7's engine
MODEL = "github:openai/gpt-4.1-mini"
EXACT = "o200k"  # the stub counts by the model's own tokenizer
CHILD_TIMEOUT_S = 300
SMALL_PR_FILES, SMALL_PR_CALLS, REVIEWED_SHARE = 10, 3, 0.9
GUIDE = "CONTRIBUTING.rst"
GENERATED_WORDS = ("generated", "vendored", "lock", "minified")  # in the engine's skip reasons


class PacedClock:
    """Real time plus a model's latency for every answer: the clock the stub's minute uses."""

    def __init__(self, seconds_per_answer: float) -> None:
        self._start = time.monotonic()
        self._extra = 0.0
        self._per_answer = seconds_per_answer

    def __call__(self) -> float:
        return time.monotonic() - self._start + self._extra

    def answered(self) -> None:
        self._extra += self._per_answer


class PacedStub(GitHubModelsStub):
    def __init__(self, paths: Sequence[str], clock: PacedClock, limits: FreeTier) -> None:
        super().__init__(paths, limits=limits, clock=clock)
        self._paced = clock

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        reply = super().answer(body)
        self._paced.answered()
        return reply


@dataclass(frozen=True)
class Engine:
    name: str
    code: Path  # the folder that holds memory_action/
    inputs: tuple[tuple[str, str], ...] = ()  # inputs this engine needs other than the defaults


@dataclass(frozen=True)
class Row:
    engine: str
    pull: CorpusPull
    reviewable: int  # changed files that are not generated
    exit_code: int
    outputs: dict[str, str]
    requests: int
    largest: int
    tokens_in: int
    seen: int  # reviewable files the stub was shown in answered requests
    posted: bool
    error: str
    # Inline reviews (the current engine, three runs of the same pull request):
    inline: int = 0  # inline comments posted over the three runs
    rejected: int = 0  # reviews the fake GitHub refused (422: an anchor it would not take)
    twice: int = 0  # findings posted more than once over the three runs
    review_calls: tuple[int, ...] = ()  # GitHub API calls for the inline review, per run
    counted: str = "4"  # how the stub counted this run's tokens: characters a token, or o200k
    system: int = 0  # tokens of the system prompt with memory (the first request's)
    diff: int = 0  # tokens of the compressed diff of the files the engine would review
    batch_fill: tuple[float, ...] = ()  # share of the window each request with a diff took
    refused: int = 0  # requests the stub refused as too large (413): each a request wasted

    @property
    def fewest(self) -> int:
        """The fewest requests that could hold the compressed diff with the system prompt."""
        room = FreeTier().max_input_tokens - self.system
        return max(1, math.ceil(self.diff / room)) if room > 0 else 0

    @property
    def floor(self) -> int:
        """The compressed diff sent once plus one system prompt with memory per request."""
        return self.diff + self.fewest * self.system

    @property
    def ratio(self) -> float:
        return self.tokens_in / self.floor if self.floor else 0.0

    @property
    def met_floor(self) -> bool:
        """Tokens in within ``FLOOR_TARGET`` times the floor, no request over the window."""
        window = FreeTier().max_input_tokens
        return 0 < self.ratio <= FLOOR_TARGET and self.largest <= window

    @property
    def reviewed(self) -> int:
        counted = _count(self.outputs.get("files_reviewed"))
        if counted is not None:
            return counted
        return self.seen if self.posted and self.exit_code == 0 else 0

    @property
    def skipped(self) -> str:
        counted = _count(self.outputs.get("files_skipped"))
        return "-" if counted is None else str(counted)

    @property
    def outcome(self) -> str:
        if self.outputs.get("outcome"):
            return self.outputs["outcome"]
        if self.exit_code == 0:
            return "reviewed" if self.posted else "no comment"
        return f"exit {self.exit_code}" + (f" ({self.error})" if self.error else "")


def _count(value: str | None) -> int | None:
    """An output that is a number, or a list (comma or newline separated); None when absent."""
    if value is None:
        return None
    if value.strip().isdigit():
        return int(value)
    return len([item for item in re.split(r"[,\n]", value) if item.strip()])


def reviewable_paths(pull: CorpusPull) -> list[str]:
    """The changed files that are not generated, by the engine's own rule when it has one."""
    try:
        from memory_action.github.pull_request import ChangedFile  # noqa: PLC0415
        from memory_action.review.selection import skip_reason  # noqa: PLC0415
    except ImportError:
        return pull.paths
    kept = []
    for f in pull.files:
        changed = ChangedFile(
            path=f["filename"],
            status=f["status"],
            additions=f["additions"],
            deletions=f["deletions"],
            patch=f.get("patch"),
        )
        try:
            reason = skip_reason(changed, attributes="", exclude=())
        except TypeError:  # another signature than this script knows: count every file
            return pull.paths
        if reason is None or not any(word in reason for word in GENERATED_WORDS):
            kept.append(f["filename"])
    return kept


def _changed(pull: CorpusPull) -> list[Any]:
    from memory_action.github.pull_request import ChangedFile  # noqa: PLC0415

    return [
        ChangedFile(
            path=f["filename"],
            status=f["status"],
            additions=f["additions"],
            deletions=f["deletions"],
            patch=f.get("patch"),
        )
        for f in pull.files
    ]


def wire_tokens(text: str, counted: str) -> int:
    """Tokens of ``text`` as the stub counts it: by the tokenizer named, else its JSON string at
    ``counted`` characters a token."""
    if counted == EXACT:
        return shared(O200K).count(text)
    return math.ceil(len(json.dumps(text)) / float(counted))


def free_tier(counted: str) -> FreeTier:
    if counted == EXACT:
        return FreeTier(encoding=O200K)
    return FreeTier(chars_per_token=float(counted))


def described(counted: str) -> str:
    return "by o200k" if counted == EXACT else f"at {counted} characters a token"


def compressed_diff(pull: CorpusPull) -> str:
    """The diff the engine would send for the pull request at its largest context (3 lines),
    by this checkout's own selection and rendering: the floor's diff."""
    from memory_action.review.batches import render_file  # noqa: PLC0415
    from memory_action.review.selection import select_files  # noqa: PLC0415

    chosen, _skipped = select_files(_changed(pull), attributes="", exclude=())
    return "\n".join(render_file(rf, context=3).rstrip("\n") for rf in chosen)


def _system_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    content = first.get("content") if first.get("role") == "system" else ""
    return content if isinstance(content, str) else json.dumps(content)


def extract_baseline(dest: Path) -> Engine | None:
    """memory_action/ as it was at BASELINE, or None when this checkout cannot give it."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", BASELINE, "memory_action"],
        capture_output=True,
        check=False,
        timeout=60,
    )
    if done.returncode != 0:
        print(f"baseline {BASELINE} skipped: {done.stderr.decode().strip()}", file=sys.stderr)
        return None
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(dest, filter="data")
    # The baseline knows no max_memory_kb=auto: give it its own default.
    return Engine(f"baseline ({BASELINE})", dest, (("max_memory_kb", "16"),))


def check_imports(engine: Engine, work: Path) -> None:
    """The child must import the engine's code, not the installed package."""
    probe = "import memory_action; print(memory_action.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=child_env(work, code=engine.code),
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    if not Path(done.stdout.strip()).resolve().is_relative_to(engine.code.resolve()):
        raise SystemExit(f"{engine.name}: the child imports {done.stdout.strip()}")


@dataclass(frozen=True)
class Setup:
    model_seconds: float
    agents_md: str  # the checkout's AGENTS.md ("": none)
    verbose: bool = False  # print every request the stub received
    first_count: str = "o200k"  # the count the inline reviews' three runs are made at


def agents_md(corpus: ClickCorpus, kib: int) -> str:
    """The first ``kib`` KiB of click's CONTRIBUTING.rst (the oldest tree that has one)."""
    guides = [p.base[GUIDE] for p in reversed(corpus.pulls) if GUIDE in p.base]
    return guides[0].decode()[: kib * 1024] if kib and guides else ""


REVIEW_CALLS = re.compile(r"/reviews|/pulls/\d+/comments|/pulls/comments/|/compare/|/graphql")
PUSHES = 3  # runs of the same pull request for the ledger's figures (opened, then synchronize)


def _child(engine: Engine, work: Path, action: dict[str, str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memory_action.cli", "run"],
            env=child_env(work, code=engine.code, **action),
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1, f"no exit after {CHILD_TIMEOUT_S} s"
    return done.returncode, done.stdout + done.stderr


def _review_calls(fake: FakeGitHub, since: int) -> int:
    return sum(1 for _method, url in fake.calls[since:] if REVIEW_CALLS.search(url))


def _twice(fake: FakeGitHub, number: int) -> int:
    """Findings posted more than once: the same comment on the same line, in any review."""
    posted = [(c["path"], c["line"], c["side"], c["body"]) for c in fake.reviews.posted(number)]
    return len(posted) - len(set(posted))


def review(engine: Engine, pull: CorpusPull, work: Path, setup: Setup, counted: str) -> Row:
    paths = reviewable_paths(pull)
    limits = free_tier(counted)
    fake = FakeGitHub()
    fake_pull = fake.add_pull(pull.fake())
    runner = ActionRunner(work)
    if setup.agents_md:
        # In the checkout (where the baseline reads it) and at the base commit (where a pull
        # request run reads its read-only memory since issue 8).
        runner.workspace.mkdir(parents=True, exist_ok=True)
        (runner.workspace / "AGENTS.md").write_text(setup.agents_md)
        fake_pull.base_contents = {**fake_pull.base_contents, "AGENTS.md": setup.agents_md}
    with (
        GitHubHttpServer(fake) as github,
        PacedStub(paths, PacedClock(setup.model_seconds), limits) as stub,
    ):
        runner.inputs.update(model=MODEL, model_base_url=stub.base_url, **dict(engine.inputs))
        runner.extra_env.update(GITHUB_API_URL=github.base_url, GITHUB_SHA=pull.head_sha)
        event = pull_request_event(pull.number, head_sha=pull.head_sha, base_sha=pull.base_sha)
        action = runner.env("pull_request", event, f"refs/pull/{pull.number}/merge")
        exit_code, log = _child(engine, work, action)
        requests = stub.requests
        calls = [_review_calls(fake, 0)]
        # The same head pushed again twice (a re-run, an empty push): the model proposes
        # findings from the same pool again; the ledger must keep every one from a repeat.
        repeats = PUSHES if engine.code == ROOT and counted == setup.first_count else 1
        for _push in range(1, repeats):
            since = len(fake.calls)
            again = pull_request_event(
                pull.number, head_sha=pull.head_sha, base_sha=pull.base_sha, action="synchronize"
            )
            _child(
                engine, work, runner.env("pull_request", again, f"refs/pull/{pull.number}/merge")
            )
            calls.append(_review_calls(fake, since))
    answered = [r for r in requests if r.status == 200]
    if setup.verbose:
        for r in requests:
            tools = ",".join(sorted(t["function"]["name"] for t in r.body.get("tools") or []))
            print(
                f"  {pull.tag} {r.status} {r.tokens:>5} tok, {len(r.seen):>3} files seen, "
                f"reply {r.reply or '-'}, tools {tools or '-'}",
                file=sys.stderr,
            )
    seen = set().union(*(r.seen for r in answered)) if answered else set()
    return Row(
        engine=engine.name,
        pull=pull,
        reviewable=len(paths),
        exit_code=exit_code,
        outputs=parse_outputs(Path(action["GITHUB_OUTPUT"]).read_text()),
        requests=len(requests),
        largest=max((r.tokens for r in requests), default=0),
        tokens_in=sum(r.tokens for r in answered),
        seen=len(seen & set(paths)),
        posted=bool(fake.comments.get(pull.number)),
        error=_error(log),
        inline=len(fake.reviews.posted(pull.number)),
        rejected=len(fake.reviews.rejected),
        twice=_twice(fake, pull.number),
        review_calls=tuple(calls),
        counted=counted,
        system=wire_tokens(_system_text(answered[0].body), counted) if answered else 0,
        diff=wire_tokens(compressed_diff(pull), counted),
        batch_fill=tuple(r.tokens / limits.max_input_tokens for r in requests if r.seen),
        refused=sum(1 for r in requests if r.status == 413),
    )


def _error(log: str) -> str:
    """The run's error, short: ``HTTP 413`` and the like, else the first words."""
    line = next((ln for ln in log.splitlines() if ln.startswith("::error")), "")
    if not line:
        return "no exit" if log.startswith("no exit") else ""
    status = re.search(r"HTTP (\d+)", line)
    return f"HTTP {status.group(1)}" if status else line.split("::", 2)[-1][:40]


# -- report -----------------------------------------------------------------------------------

COLUMNS = (
    ("PR", 10),
    ("files", 5),
    ("diff chars", 10),
    ("requests", 8),
    ("largest tok", 11),
    ("tokens in", 9),
    ("reviewed/skipped", 16),
    ("outcome", 20),
    ("comment", 7),
    ("inline", 6),
    ("422s", 4),
    ("twice", 5),
    ("review calls/run", 16),
    ("floor", 6),
    ("fewest", 6),
    ("x floor", 7),
    ("<= 1.3", 6),
    ("fill", 9),
)
FLOOR_TARGET = 1.3  # tokens in per review, times the floor (issue 19)
FILL_TARGET = 0.9  # of the window, for the requests after the first (calibrated)


def print_table(rows: Sequence[Row]) -> None:
    for engine in dict.fromkeys(r.engine for r in rows):
        print(f"\n{engine}, the window counted {described(rows[0].counted)}")
        print("  ".join(name.rjust(width) for name, width in COLUMNS))
        for r in (r for r in rows if r.engine == engine):
            values = (
                r.pull.tag,
                len(r.pull.files),
                r.pull.diff_chars,
                r.requests,
                r.largest,
                r.tokens_in,
                f"{r.reviewed}/{r.reviewable} {r.skipped}",
                r.outcome,
                "posted" if r.posted else "none",
                r.inline,
                r.rejected,
                r.twice,
                "/".join(map(str, r.review_calls)),
                r.floor,
                r.fewest,
                f"{r.ratio:.2f}",
                "met" if r.met_floor else "missed",
                _fill(r),
            )
            print("  ".join(f"{v!s:>{w}}" for v, (_n, w) in zip(values, COLUMNS, strict=True)))


def _fill(row: Row) -> str:
    """The first request's share of the window, then the least of the later ones with a diff."""
    if not row.batch_fill:
        return "-"
    first, later = row.batch_fill[0], row.batch_fill[1:-1] if len(row.batch_fill) > 2 else ()
    return f"{first:.0%}" + (f"/{min(later):.0%}" if later else "")


def targets(rows: Sequence[Row]) -> dict[str, tuple[str, bool]]:
    """The issue's targets for one engine: label → (figure, met)."""
    done = [r for r in rows if r.exit_code == 0 and r.posted and r.reviewed > 0]
    largest = max((r.largest for r in rows), default=0)
    reviewed = sum(min(r.reviewed, r.reviewable) for r in rows)
    reviewable = sum(r.reviewable for r in rows)
    small = [r for r in rows if len(r.pull.files) <= SMALL_PR_FILES]
    small_ok = [r for r in small if r.requests <= SMALL_PR_CALLS and r in done]
    per_review = sum(r.tokens_in for r in rows) // max(1, len(rows))
    worst = max(rows, key=lambda r: r.ratio, default=None)
    # Requests with a diff after the first (whose estimate is not calibrated yet), the last of
    # each review aside (what is left over fills it only partly).
    later = [f for r in rows for f in r.batch_fill[1:-1]]
    least = min(later, default=1.0)
    return {
        f"{len(rows)}/{len(rows)} reviewed and posted": (
            f"{len(done)}/{len(rows)}",
            len(done) == len(rows),
        ),
        "no request over 8,000 tokens": (
            f"largest {largest:,}",
            largest <= FreeTier().max_input_tokens,
        ),
        "no request refused as too large (413)": (
            str(sum(r.refused for r in rows)),
            not any(r.refused for r in rows),
        ),
        "90% of non-generated files reviewed": (
            f"{reviewed}/{reviewable} ({reviewed / max(1, reviewable):.0%})",
            reviewed >= REVIEWED_SHARE * reviewable,
        ),
        "PRs of <=10 files in <=3 calls": (f"{len(small_ok)}/{len(small)}", small_ok == small),
        "tokens in per review (mean)": (f"{per_review:,}", True),
        f"review tokens <= {FLOOR_TARGET} x floor, every PR": (
            f"worst {worst.ratio:.2f} ({worst.pull.tag})" if worst else "-",
            all(r.met_floor for r in rows),
        ),
        f"batches after the first >= {FILL_TARGET:.0%} full": (
            f"least {least:.0%}" if later else "-",
            least >= FILL_TARGET,
        ),
        "anchors rejected by GitHub: 0": (
            str(sum(r.rejected for r in rows)),
            not any(r.rejected for r in rows),
        ),
        f"findings posted twice in {PUSHES} runs: 0": (
            str(sum(r.twice for r in rows)),
            not any(r.twice for r in rows),
        ),
    }


def print_targets(rows: Sequence[Row]) -> bool:
    print(f"\ntargets, the window counted {described(rows[0].counted)}")
    engines = list(dict.fromkeys(r.engine for r in rows))
    checks = {e: targets([r for r in rows if r.engine == e]) for e in engines}
    print("".ljust(37) + "".join(e.rjust(30) for e in engines))
    for label in next(iter(checks.values()), {}):
        cells = []
        for engine in engines:
            figure, met = checks[engine][label]
            mark = "" if label.startswith("tokens") else (" ok" if met else " FAIL")
            cells.append(f"{figure}{mark}".rjust(30))
        print(f"{label:<37}" + "".join(cells))
    last = checks[engines[-1]] if engines else {}
    return all(met for (met,) in ((m,) for _f, m in last.values()))


def run(
    only: str | None,
    engine_names: Sequence[str],
    model_seconds: float,
    kib: int,
    counts: Sequence[str],
    *,
    verbose: bool = False,
) -> list[Row]:
    bundle = bundle_path()
    if not bundle.is_file():
        raise SystemExit(f"review_fit: {bundle} is missing (the corpus lives in ../shared)")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="review-fit-") as tmp:
        work = Path(tmp)
        corpus: ClickCorpus = load_corpus(bundle, work / "corpus.git")
        setup = Setup(
            model_seconds=model_seconds,
            agents_md=agents_md(corpus, kib),
            verbose=verbose,
            first_count=counts[0],
        )
        engines = []
        if "baseline" in engine_names:
            (work / "baseline").mkdir()
            baseline = extract_baseline(work / "baseline")
            engines += [baseline] if baseline else []
        if "current" in engine_names:
            engines.append(Engine("current checkout", ROOT))
        pulls = [*corpus.pulls, synthetic_pull(number=len(corpus.pulls) + 1)]
        for engine in engines:
            check_imports(engine, work)
            for counted in counts:
                for pull in pulls:
                    if only and pull.tag != only:
                        continue
                    started = time.monotonic()
                    folder = work / f"{engine.code.name}-{pull.tag}-{counted}"
                    row = review(engine, pull, folder, setup, counted)
                    took = time.monotonic() - started
                    print(
                        f"{engine.name} {pull.tag} counted {described(counted)}: "
                        f"{row.outcome} in {took:.1f} s",
                        file=sys.stderr,
                    )
                    rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one pull request, by its short sha (e.g. 1f9cd54f)")
    parser.add_argument("--engines", default="current", help="baseline, current or both")
    parser.add_argument(
        "--chars-per-token",
        default=f"{EXACT},4,3",
        help=f"how the stub counts the window: {EXACT} or characters a token (one or more)",
    )
    parser.add_argument("--model-seconds", type=float, default=4.0, help="model latency (s)")
    parser.add_argument("--verbose", action="store_true", help="print every model request")
    parser.add_argument("--agents-kb", type=int, default=4, help="AGENTS.md size (KiB)")
    args = parser.parse_args(argv)
    counts = args.chars_per_token.split(",")
    rows = run(
        args.only,
        args.engines.split(","),
        args.model_seconds,
        args.agents_kb,
        counts,
        verbose=args.verbose,
    )
    met = True
    for cpt in counts:
        counted = [r for r in rows if r.counted == cpt]
        print_table(counted)
        met = print_targets(counted) and met
    print(f"\nthe current engine {'meets' if met else 'misses'} the targets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
