"""The outgoing gate's promise, attacked from outside: a secret (a real-format token and a value
the run masked, each also in every form only a reader of the rendered text sees as the secret:
``tests.fakes.rendered_forms``), a team mention (also after a non-ASCII letter) and raw HTML
planted in every field the model, memory or a comment controls never leave the run.

Whole action runs go through the GitHub fake (reviews with inline comments and suggestions,
the sticky comment, comment commands and their replies, the git store's commits, a maintenance
pull request), and then EVERY request the fake received is read, whatever its endpoint, and
every file the runs left (store entries, ledger, provenance, job summary, step outputs), every
file of every archive the fake Actions cache service received, and every line of the runs' job
logs. A new write path is covered without naming it here: its request is among those the fakes
received.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from markdown_it import MarkdownIt

from memory_action.lifecycle.layers import write_entry
from memory_action.memory.provenance import Provenance
from memory_action.memory.state import PROVENANCE_FILE, EntryState
from memory_action.review.answer import ANSWER_TOOL
from memory_action.store.git import MEMORY_BRANCH
from tests.fakes.cache_harness import CacheHarness, default_tuning, fast_tuning
from tests.fakes.cache_service import FakeCacheService
from tests.fakes.github_api import REPOSITORY, FakeGitHub, FakePullRequest, changed_file
from tests.fakes.maintenance_checkout import checkout_runner, maintain, seed_without_digest
from tests.fakes.rendered_forms import as_seen, rendered_forms
from tests.fakes.runner import (
    ActionRunner,
    CacheRunner,
    RunOutcome,
    pull_request_event,
    push_event,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.secrets_corpus import MASKED_VALUES, PLANTED

TOKEN = next(p for p in PLANTED if p.family == "GitHub classic PAT").secrets[0]
MASKED = MASKED_VALUES[1]  # given as model_api_key: the run masks it
TEAM = "octo-org/everyone"
HTML = '<img src="x" alt="PLANTED">'
# What is planted everywhere; a memory line holds no secret (that edit is refused anyway).
LOUD = f"Merci é@{TEAM}, @{TEAM} {HTML} <details><summary>PLANTED</summary>"
# Every form of both secrets that GitHub shows as the secret (escaped, as references, split by
# emphasis or invisible characters, full-width). Memory may hold the token's: its edits judge the
# text as written, the gate judges it as read. The masked value's forms hold pieces of it as
# written, which a memory edit refuses; they reach every other path.
HIDDEN_TOKEN = " ".join(rendered_forms(TOKEN).values())
HIDDEN = " ".join([HIDDEN_TOKEN, *rendered_forms(MASKED).values()])
PLANT = f"{TOKEN} {MASKED} {HIDDEN} {LOUD}"  # secrets first: a line shown shortened keeps them
MEMORY = ".agent-memory/AGENTS.md"
MAIN, PR_REF = "refs/heads/main", "refs/pull/7/merge"
COMMITTED = "memory-agent/v1/memory-agent/repo/committed"
OVERLAY = "memory-agent/v1/memory-agent/repo/pr-7/"
PATCH = "@@ -1,2 +1,3 @@\n def fetch(url):\n+    for attempt in range(3):\n     return get(url)\n"
# Git allows any byte but NUL in a file name: a changed file's path is untrusted text too.
ODD_PATH = f"docs/a\n\n@{TEAM} {HTML}.md"
PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# GitHub notifies "@name" after anything but ASCII [A-Za-z0-9_] (not in a URL's path).
LIVE_MENTION = re.compile(rf"(?<![A-Za-z0-9_/])@{re.escape(TEAM)}")
NOT_MARKDOWN = frozenset({"query", "contents", "content", "sha", "path", "filename"})


def secret_parts() -> list[str]:
    """Each secret, and runs of 8 of its characters: none may survive anywhere."""
    seen = [as_seen(secret) for secret in (TOKEN, MASKED)]
    return [s[i : i + 8] for s in seen for i in range(0, len(s) - 7, 4)]


def leaks(text: str) -> list[str]:
    """The parts of a secret in ``text`` as written or as a reader could see it."""
    seen = as_seen(text)
    return [part for part in secret_parts() if part in text or part in seen]


def acting(markdown: str) -> list[str]:
    """What of the planted Markdown would act if GitHub rendered ``markdown``."""
    found = []
    for block in PARSER.parse(markdown):
        for token in [block, *(block.children or [])]:
            if token.type in ("html_block", "html_inline") and "PLANTED" in token.content:
                found.append(token.content)
            if token.type == "text" and LIVE_MENTION.search(token.content):
                found.append(token.content)
    return found


def strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a JSON value with the key it is under (base64 contents decoded)."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from strings(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from strings(item, key)
    elif isinstance(value, str):
        if key == "contents":
            with contextlib.suppress(binascii.Error, UnicodeDecodeError):
                value = base64.b64decode(value, validate=True).decode()
        yield key, value


def archive_files(data: bytes) -> dict[str, str]:
    """Every file of a cache archive (a tar, zstd- or gzip-compressed), read as text."""
    if data[:2] == b"\x1f\x8b":
        raw = gzip.decompress(data)
    else:
        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    files: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                files[member.name] = handle.read().decode("utf-8", errors="replace")
    return files


def saved_to_cache(service: FakeCacheService, given: frozenset[str]) -> dict[str, str]:
    """Every file of every entry the runs saved to the cache (not those the test planted)."""
    files: dict[str, str] = {}
    for entry in service.visible():
        if entry.key not in given and entry.data is not None:
            for name, text in archive_files(entry.data).items():
                files[f"{entry.key}!{name}"] = text
    return files


def problems(
    github: FakeGitHub,
    roots: list[Path],
    outcomes: list[RunOutcome],
    cached: dict[str, str],
) -> list[str]:
    found: list[str] = []
    writes = [r for r in github.received if r.method != "GET"]
    assert writes, "the runs should have written to GitHub"
    for request in writes:
        for key, text in strings(request.json() if request.body else {}):
            where = f"{request.method} {request.url} {key}"
            found += [f"{where}: secret {part!r}" for part in leaks(text)]
            if key not in NOT_MARKDOWN:
                found += [f"{where}: acts {bit!r}" for bit in acting(text)]
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path.name == "event.json" or ".git" in path.parts:
                continue  # what the runs were given, and the checkout's own history
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path}: secret {part!r}" for part in leaks(text)]
            if path.name in ("summary", "output"):
                found += [f"{path}: acts {bit!r}" for bit in acting(text)]
    for name, text in cached.items():
        found += [f"cache entry {name}: secret {part!r}" for part in leaks(text)]
    for outcome in outcomes:
        log = "\n".join(x for x in outcome.stdout.splitlines() if not x.startswith("::add-mask"))
        found += [f"log: secret {part!r}" for part in leaks(log + outcome.stderr)]
    return found


def answer(summary: str, *findings: dict[str, Any]) -> Any:
    return tool_call(ANSWER_TOOL, {"summary": summary, "findings": list(findings), "fixed": []})


def finding(**fields: Any) -> dict[str, Any]:
    return {"path": "src/fetch.py", "line": 2, "title": PLANT, "body": PLANT, **fields}


def comment_event(body: str, *, number: int, issue: bool, comment_id: int) -> dict[str, Any]:
    kind = "issues" if issue else "pull"
    event: dict[str, Any] = {
        "action": "created",
        "issue": {"number": number, "user": {"login": "mona"}},
        "comment": {
            "id": comment_id,
            # The payload's own fields are untrusted too (a commit message names this one).
            "html_url": f"https://github.com/{REPOSITORY}/{kind}/{number}#c-{comment_id} {PLANT}",
            "body": body,
            "author_association": "MEMBER",
            "user": {"login": "maintainer", "type": "User"},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }
    if not issue:
        event["issue"]["pull_request"] = {"url": "x"}
    return event


def ran(outcome: RunOutcome) -> RunOutcome:
    assert outcome.exit_code == 0, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stdout + outcome.stderr
    return outcome


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(permissions={"maintainer": "write"})
    changed = [changed_file("src/fetch.py", PATCH), changed_file(ODD_PATH, PATCH)]
    fake.add_pull(FakePullRequest(files=changed))
    with fake.serve():
        yield fake


def commands(runner: ActionRunner, number: int, *, issue: bool) -> list[RunOutcome]:
    """Every command, its text planted; on an issue with the git store, on a pull request
    with its sticky comment."""
    texts = [
        "@memory-agent memory",  # first: the tampered provenance as it was restored
        f"@memory-agent remember Ping {LOUD}",
        f"@memory-agent remember {PLANT}",
        f"@memory-agent forget {PLANT}",
    ]
    return [
        ran(
            runner.run(
                "issue_comment",
                comment_event(text, number=number, issue=issue, comment_id=6_000 + i),
                MAIN,
                ScriptedChatModel.from_script(),
            )
        )
        for i, text in enumerate(texts)
    ]


def test_nothing_planted_leaves_any_run(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes: list[RunOutcome] = []
    planted_memory = tool_call(
        "write_file", {"file_path": MEMORY, "content": f"- {LOUD}\n- {HIDDEN_TOKEN}\n"}
    )
    secret_memory = tool_call("write_file", {"file_path": MEMORY, "content": f"- {PLANT}\n"})

    # The git store: a push run commits memory; its provenance is then tampered with.
    git = ActionRunner(tmp_path / "git", inputs={"memory_store": "git"})
    git.inputs["model_api_key"] = MASKED
    model = ScriptedChatModel.from_script(secret_memory, planted_memory, f"Done. {PLANT}")
    outcomes.append(ran(git.run("push", push_event(), MAIN, model)))
    stamp = {
        "run_id": "1",
        "run_attempt": "1",
        "event": "push",
        "actor": f"{HTML} @{TEAM} é@{TEAM} {TOKEN}",
        "pr": None,
        "trust": "trusted",
        "time": "2026-11-29T08:15:00Z",
    }
    tampered = {"version": 1, "entries": {f"- {LOUD}": stamp}}
    github.git.commit_files(MEMORY_BRANCH, {f"{COMMITTED}/{PROVENANCE_FILE}": json.dumps(tampered)})
    outcomes += commands(git, 12, issue=True)

    # A pull request: inline comments and a suggestion, a finding with a path no comment can
    # point at (a line end and a mention in it), the review's summary, memory; then commands.
    review = ActionRunner(tmp_path / "review")
    review.inputs["model_api_key"] = MASKED
    model = ScriptedChatModel.from_script(
        planted_memory,
        secret_memory,
        answer(
            PLANT,
            finding(suggestion=f"x = 1\r- {PLANT}\n"),
            finding(path=f"src/fetch.py\n\n@{TEAM} {HTML} {TOKEN}", line=9),
            finding(line=40),
            finding(path=ODD_PATH, line=40),  # no anchor: listed in the review's body
        ),
    )
    outcomes.append(ran(review.run("pull_request", pull_request_event(), PR_REF, model)))
    outcomes += commands(review, 7, issue=False)

    # Maintenance proposing its changes in a pull request into the memory branch.
    maintenance = checkout_runner(tmp_path / "maintenance", monkeypatch, memory_store="git")
    maintenance.inputs["model_api_key"] = MASKED
    seed_without_digest(maintenance, "# Memory\n- Settings are parsed in `src/settings.py`.\n")
    maintenance.inputs["maintenance_output"] = "pull_request"
    done, _ = maintain(maintenance, planted_memory, f"Cleaned up. {PLANT}")
    outcomes.append(done)

    assert github.reviews.posted(7), "the review should have posted inline comments"
    [review_body] = [r["body"] for r in github.reviews.reviews[7]]
    assert "docs/a" in review_body, "the finding on the odd path should be in the review body"
    assert github.git.opened, "maintenance should have opened a pull request"

    with FakeCacheService([MAIN]) as service, default_tuning(fast_tuning([])):
        cache, cached = cache_runs(tmp_path / "cache", service, github, outcomes)
    roots = [git.root, review.root, maintenance.root, cache]
    assert problems(github, roots, outcomes, cached) == []


def cache_runs(
    root: Path, service: FakeCacheService, github: FakeGitHub, outcomes: list[RunOutcome]
) -> tuple[Path, dict[str, str]]:
    """A push and a pull request run with the Actions cache as the store: committed memory,
    then an overlay with its findings ledger and provenance, saved as archives. The pull
    request's scope holds an entry planted under a key that carries a token, as the pull
    request's own workflow runs could save one there: the runs name the key they restore in
    their logs. Returns the runs' root and every file the runs saved to the cache."""
    github.cache = service
    planted_key = f"{OVERLAY}{TOKEN}"
    pr_token = service.add_run([PR_REF, MAIN])
    runner = CacheRunner(root, extra_env=service.env())
    runner.inputs["model_api_key"] = MASKED
    pushed = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": f"- {LOUD}\n"}), f"Ok. {PLANT}"
    )
    outcomes.append(ran(runner.run("push", push_event(), MAIN, pushed)))
    assert len(service.visible()) == 1, outcomes[-1].stdout

    harness = CacheHarness(service, root.parent / "planter")  # what the test gives: not read
    stamp = {"run_id": "1", "run_attempt": "1", "event": "push", "actor": f"@{TEAM} {TOKEN}"}
    stamp |= {"pr": None, "trust": "trusted", "time": "2026-11-29T08:15:00Z"}
    write_entry(
        harness.folder, f"- {LOUD}\n", EntryState(layer="overlay", base=""), Provenance(records={})
    )
    tampered = {"version": 1, "entries": {f"- {LOUD}": stamp}}
    (harness.folder / PROVENANCE_FILE).write_text(json.dumps(tampered), encoding="utf-8")
    assert harness.store(token=pr_token).save(planted_key, harness.folder).saved
    harness.close()

    runner.extra_env = {**service.env(), "ACTIONS_RUNTIME_TOKEN": pr_token}
    model = ScriptedChatModel.from_script(
        tool_call("write_file", {"file_path": MEMORY, "content": f"- {LOUD}\n- {PLANT}\n"}),
        answer(PLANT, finding(), finding(line=40)),
    )
    outcome = ran(runner.run("pull_request", pull_request_event(), PR_REF, model))
    outcomes.append(outcome)
    assert "Restored memory from key" in outcome.stdout  # the planted key, named in the log
    cached = saved_to_cache(service, frozenset({planted_key}))
    names = {name.rpartition("!")[2] for name in cached}
    assert {"AGENTS.md", PROVENANCE_FILE, "state.json"} <= {n.rpartition("/")[2] for n in names}
    assert any("Merci" in text for text in cached.values())  # what was planted, read back
    return runner.root, cached
