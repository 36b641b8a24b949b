"""Every safety guard removed alone, in a scratch copy, and the test that notices (issue 31).

Each guard of ``GUARDS`` below names its file, its function, one exact edit that removes
it (a snippet of the source and what it becomes), what it protects and the test files that must
catch its removal. The checkout is copied once to a temporary folder (without ``.venv`` and
``.git``; ``node_modules`` folders are linked, not copied); then, one guard at a time, the edit is
made in the copy, only that guard's test files run (``pytest -x -q``, with this interpreter and
``PYTHONPATH`` on the copy), and the file is put back. The table printed names, for each guard,
the test that failed and the seconds its run took.

    .venv/bin/python bench/guards.py               # the whole list, after a reference run
    .venv/bin/python bench/guards.py --only fork   # guards whose name contains "fork"
    .venv/bin/python bench/guards.py --list        # the list, nothing run

The reference run first runs every named test file on the unchanged copy: a test that fails
there would "catch" every removal, so the bench stops. The exit code is 1 when a removal
survives (no test failed), when an edit no longer applies (its snippet is not found exactly once
inside its function: the source moved, and the list must follow it) or when a removed guard
broke something other than a test (an import, the collection).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = (".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache")
TIMEOUT_S = 1_200  # of one guard's test run
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+::.*?)(?: - .*)?$", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Guard:
    name: str
    file: str
    function: str  # ``function`` or ``Class.method``: the edit must lie inside it
    old: str  # found exactly once in ``file``
    new: str  # what ``old`` becomes: the guard gone, the code still running
    protects: str
    tests: tuple[str, ...]  # test files (or node ids) that must fail without the guard


# GUARDS_START (the list; keep each edit the smallest that removes the guard and nothing else)
INTEGRATION = "tests/integration/"
U = "tests/unit/"
GATE = (f"{INTEGRATION}test_guards_alone.py", f"{INTEGRATION}test_outgoing_gate.py")
TRUST = (
    f"{INTEGRATION}test_trust.py",
    f"{INTEGRATION}test_trust_lookup_failures.py",
    f"{U}test_context.py",
)
TOOLS = (f"{U}memory/test_memory_tools.py", f"{INTEGRATION}test_memory_safety.py")
PROPOSALS = (f"{U}memory/test_memory_proposals.py", f"{INTEGRATION}test_memory_promotion.py")
LOCAL = (f"{U}local/test_repository.py", f"{INTEGRATION}test_local_memory_repositories.py")
PROMPT = (f"{U}review/test_consolidation.py", f"{INTEGRATION}test_review_engine.py")

GUARDS: tuple[Guard, ...] = (
    # --- the outgoing gate's masked-value pass, one path at a time
    Guard(
        name="gate: step outputs",
        file="memory_action/main.py",
        function="_run_action",
        old="gate(value, workflow.masked_values, form=form)",
        new="gate(value, (), form=form)",
        protects="a masked value in an action output (a restored key a fork's workflow chose)",
        tests=GATE,
    ),
    Guard(
        name="gate: sticky comment",
        file="memory_action/publish/report.py",
        function="safe_comment",
        old="return gate(body, masked, ours=ours)",
        new="return gate(body, (), ours=ours)",
        protects="a masked value in the posted sticky comment (a file name the author chose)",
        tests=GATE,
    ),
    Guard(
        name="gate: job summary",
        file="memory_action/publish/report.py",
        function="safe_summary",
        old="return gate(render_summary(summary), masked, ours=(*ours, *found))",
        new="return gate(render_summary(summary), (), ours=(*ours, *found))",
        protects="a masked value in the job summary",
        tests=GATE,
    ),
    Guard(
        name="job summary: the file's mask",
        file="memory_action/gha.py",
        function="Workflow.append_summary",
        old='handle.write(self._mask(markdown.text).rstrip("\\n") + "\\n")',
        new='handle.write(markdown.text.rstrip("\\n") + "\\n")',
        protects="a masked value in the job summary, when the gate before it misses one",
        tests=GATE,
    ),
    Guard(
        name="gate: command reply",
        file="memory_action/commands/route.py",
        function="_answer",
        old="body = gate(replies.reply_body(answers), log.masked_values)",
        new="body = gate(replies.reply_body(answers), ())",
        protects="a masked value in a comment command's reply (a stored entry's key)",
        tests=GATE,
    ),
    Guard(
        name="gate: saved AGENTS.md",
        file="memory_action/lifecycle/layers.py",
        function="write_entry",
        old="write_memory(folder, gate(text, masked, form=Form.TEXT).text)",
        new="write_memory(folder, gate(text, (), form=Form.TEXT).text)",
        protects="a masked value in saved memory, when the earlier layers miss it",
        tests=GATE,
    ),
    Guard(
        name="gate: inline review body",
        file="memory_action/review/inline_review.py",
        function="_publish",
        old="body = gate(_review_body(prepared, loose), plan.masked)",
        new="body = gate(_review_body(prepared, loose), ())",
        protects="a masked value in the inline review's body",
        tests=(*GATE, f"{INTEGRATION}test_inline_review.py"),
    ),
    Guard(
        name="gate: inline comments",
        file="memory_action/review/anchors.py",
        function="anchor",
        old="body=gate(comment_body(finding), masked),",
        new="body=gate(comment_body(finding), ()),",
        protects="a masked value in an inline comment on a line",
        tests=(*GATE, f"{INTEGRATION}test_inline_review.py", f"{U}review/test_anchors.py"),
    ),
    # --- trust decisions
    Guard(
        name="trust: a fork's pull request",
        file="memory_action/run/context.py",
        function="_pull_request",
        old="is_fork=fields.head_repo.lower() != fields.base_repo.lower(),",
        new="is_fork=False,",
        protects="a fork's pull request is untrusted and never writes memory",
        tests=TRUST,
    ),
    Guard(
        name="trust: writers only",
        file="memory_action/run/context.py",
        function="settle_trust",
        old="writer = lookup.has_write_access(login)",
        new="writer = True",
        protects="an author whose permission is read or triage is untrusted",
        tests=TRUST,
    ),
    Guard(
        name="trust: unconfirmed write access",
        file="memory_action/run/context.py",
        function="decide_trust",
        old="person = association not in NO_WRITE_ASSOCIATIONS and writer is True",
        new="person = association not in NO_WRITE_ASSOCIATIONS and writer is not False",
        protects="write access GitHub did not confirm (not asked, lookup failed) is none",
        tests=TRUST,
    ),
    Guard(
        name="trust: unknown head repository",
        file="memory_action/run/context.py",
        function="settle_trust",
        old="same = head is not None and head.lower() == context.repository.lower()",
        new="same = head is None or head.lower() == context.repository.lower()",
        protects="an issue_comment on a pull request whose head GitHub did not name is a fork's",
        tests=TRUST,
    ),
    Guard(
        name="trust: a comment on a fork's pull request",
        file="memory_action/run/context.py",
        function="decide_trust",
        old="trusted = person and pr is not None and not pr.is_fork",
        new="trusted = person and pr is not None",
        protects="a writer's comment does not make a fork's content trusted",
        tests=TRUST,
    ),
    Guard(
        name="trust: a review reply on a fork's pull request",
        file="memory_action/run/context.py",
        function="_review_comment_trust",
        old="if pr is None or pr.is_fork:",
        new="if pr is None:",
        protects="a reply in a fork's pull request's thread neither trusts nor writes",
        tests=TRUST,
    ),
    # --- command permissions
    Guard(
        name="commands: writers only",
        file="memory_action/commands/route.py",
        function="run_commands",
        old="if commands.for_memory and not commenter_may_write(context, github):",
        new="if False:",
        protects="only people with write access change or read memory by a comment command",
        tests=(f"{INTEGRATION}test_comment_commands.py",),
    ),
    # --- the memory tools: path confinement, symlinks, secrets
    Guard(
        name="memory tools: only the writable file",
        file="memory_action/memory/tools.py",
        function="MemoryEditor._check_path",
        old="        if pure == self._files.writable:\n            return\n",
        new="        return\n",
        protects="the model edits its own memory file and no other path",
        tests=TOOLS,
    ),
    Guard(
        name="memory tools: symlink check before reading",
        file="memory_action/memory/tools.py",
        function="MemoryEditor._read",
        old='        """The file\'s text with LF line ends, or None when it does not exist."""\n'
        "        self._check_no_symlink()\n",
        new='        """The file\'s text with LF line ends, or None when it does not exist."""\n',
        protects="a symlink planted in restored memory is never followed",
        tests=TOOLS,
    ),
    Guard(
        name="memory tools: symlink re-check after mkdir",
        file="memory_action/memory/tools.py",
        function="MemoryEditor._replace",
        old=(
            "        self._check_no_symlink()"
            "  # mkdir(exist_ok=True) would have accepted a linked folder\n"
        ),
        new="",
        protects="a folder swapped for a link between the read and the write is never followed",
        tests=TOOLS,
    ),
    Guard(
        name="memory tools: the secret refusal",
        file="memory_action/memory/tools.py",
        function="MemoryEditor._write",
        old="        self._check_secrets(before, after, tool)\n",
        new="",
        protects="a write that would put a secret in memory is refused and recorded",
        tests=TOOLS,
    ),
    # --- the checklist
    Guard(
        name="checklist: an unticked item is vetoed",
        file="memory_action/memory/proposals.py",
        function="checked_items",
        old="return [item for item in proposal.items if states.get(item.id, False)]",
        new="return list(proposal.items)",
        protects="an item a person unticked is not promoted at the merge",
        tests=PROPOSALS,
    ),
    Guard(
        name="checklist: a forged second tick",
        file="memory_action/memory/proposals.py",
        function="task_states",
        old="states[match.group(2)] = states.get(match.group(2), True) and ticked",
        new="states[match.group(2)] = ticked",
        protects="a second line carrying an item's marker can only veto it, never tick it",
        tests=PROPOSALS,
    ),
    Guard(
        name="checklist: markers in the model's review",
        file="memory_action/safety/untrusted_markdown.py",
        function="safe_markdown",
        old="            return break_markers(safe)\n",
        new="            return safe\n",
        protects="the model cannot write a checkbox or a block the merge run would read",
        tests=(f"{U}test_untrusted_markdown.py", f"{U}test_report.py", *PROPOSALS),
    ),
    # --- the fork's cache scope
    Guard(
        name="fork scope: committed memory on a fork's merge ref",
        file="memory_action/lifecycle/layers.py",
        function="_fork_planted",
        old="    if not fork_ref or not prefix:\n        return None\n",
        new="    return None\n",
        protects="committed memory is not read from a cache scope a fork's workflow can write",
        tests=(
            f"{U}test_layers.py",
            f"{INTEGRATION}test_trust.py",
            f"{INTEGRATION}test_memory_safety.py",
        ),
    ),
    # --- the stores
    Guard(
        name="git store: compare-and-swap of the folder",
        file="memory_action/store/git.py",
        function="GitMemoryStore._save",
        old="if current_key != self._seen.get(path):",
        new="if False:",
        protects="a save never overwrites an entry another run saved since this run read",
        tests=(f"{INTEGRATION}test_git_store.py", f"{INTEGRATION}test_git_store_runs.py"),
    ),
    Guard(
        name="local store: the repository's own key (restore)",
        file="memory_action/local/repository.py",
        function="RepositoryStore.restore",
        old="primary=self._prefix + keys.primary,",
        new="primary=keys.primary,",
        protects="a restore reads only this repository's memory",
        tests=LOCAL,
    ),
    Guard(
        name="local store: the repository's own prefixes (restore)",
        file="memory_action/local/repository.py",
        function="RepositoryStore.restore",
        old="restore=tuple(self._prefix + key for key in keys.restore),",
        new="restore=tuple(keys.restore),",
        protects="a restore-key prefix reaches only this repository's entries",
        tests=LOCAL,
    ),
    Guard(
        name="local store: the repository's own key (save)",
        file="memory_action/local/repository.py",
        function="RepositoryStore.save",
        old="saved = self.store.save(self._prefix + key, folder)",
        new="saved = self.store.save(key, folder)",
        protects="a save lands in this repository's namespace",
        tests=LOCAL,
    ),
    Guard(
        name="local store: the repository's own entries (list)",
        file="memory_action/local/repository.py",
        function="RepositoryStore.entries",
        old="for entry in self.store.entries(self._prefix + prefix)",
        new="for entry in self.store.entries(prefix)",
        protects="`memory list` and friends show only this repository's entries",
        tests=LOCAL,
    ),
    Guard(
        name="local store: the repository's own entries (read)",
        file="memory_action/local/repository.py",
        function="RepositoryStore.read_entry",
        old="return self.store.read_entry(self._prefix + key)",
        new="return self.store.read_entry(key)",
        protects="`memory show` reads only this repository's entries",
        tests=LOCAL,
    ),
    # --- cuts of untrusted text in the prompt
    Guard(
        name="prompt: the description's cut",
        file="memory_action/review/messages.py",
        function="header",
        old='body = bounded(info.body.strip(), description_chars, "description")',
        new="body = info.body.strip()",
        protects="the author's description takes a bounded share of the model's input",
        tests=PROMPT,
    ),
    Guard(
        name="prompt: the title's cut",
        file="memory_action/review/messages.py",
        function="header",
        old='title = bounded(" ".join(info.title.split()), TITLE_CHARS, "title")',
        new='title = " ".join(info.title.split())',
        protects="the pull request's title takes a bounded share of the model's input",
        tests=PROMPT,
    ),
    Guard(
        name="prompt: the pull request's closing tag",
        file="memory_action/review/messages.py",
        function="defuse",
        old='return text.replace("</pull_request", "<\\\\/pull_request")',
        new="return text",
        protects="the author's text cannot close the <pull_request> data block",
        tests=PROMPT,
    ),
    Guard(
        name="prompt: the comment's cut",
        file="memory_action/review/session.py",
        function="_comment_request",
        old='fence(bounded(context.comment_body.strip(), chars, "comment"), char="~")',
        new='fence(context.comment_body.strip(), char="~")',
        protects="a comment (anyone may post 65,536 characters) takes a bounded share",
        tests=(
            f"{U}review/test_consolidation.py",
            f"{INTEGRATION}test_comment_commands.py",
            f"{INTEGRATION}test_trust.py",
        ),
    ),
    Guard(
        name="prompt: the notes' cut",
        file="memory_action/review/engine.py",
        function="ReviewEngine.review",
        old='self._extra = bounded(extra, share, "the notes for this review")',
        new="self._extra = extra",
        protects="the notes of a review (a comment's request) take a bounded share",
        tests=PROMPT,
    ),
    Guard(
        name="prompt: the PR tool's description cut",
        file="memory_action/agent/pr_tools.py",
        function="_header",
        old='_limit(body, MAX_DESCRIPTION_CHARS, "the description"),',
        new="body,",
        protects="the description the agent's pull request tool returns is bounded",
        tests=(f"{U}agent/test_agent_pr_tools.py",),
    ),
)
# GUARDS_END


@dataclass(frozen=True, kw_only=True)
class Outcome:
    guard: str
    caught_by: str  # the failing test's node id, or what went wrong
    ok: bool
    seconds: float


def scratch_copy(into: Path) -> Path:
    """The checkout copied under ``into``; big ``node_modules`` folders linked, not copied."""
    target = into / ROOT.name

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name in SKIPPED}
        if "node_modules" in names:
            skipped.add("node_modules")
        return skipped

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)
    for modules in ROOT.rglob("node_modules"):
        if ".venv" in modules.parts or "node_modules" in modules.parent.parts:
            continue
        link = target / modules.relative_to(ROOT)
        if link.parent.is_dir() and not link.exists():
            link.symlink_to(modules, target_is_directory=True)
    return target


def _function_lines(tree: ast.Module, dotted: str) -> tuple[int, int] | None:
    """First and last line of ``function`` or ``Class.method`` in ``tree``."""
    body: Sequence[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in dotted.split("."):
        node = next(
            (
                child
                for child in body
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and child.name == part
            ),
            None,
        )
        if node is None:
            return None
        body = node.body
    if node is None:
        return None
    return node.lineno, node.end_lineno or node.lineno


def _enclosing(tree: ast.Module, line: int) -> str:
    """The dotted name of the innermost function or class holding ``line`` ("" for none)."""

    def walk(body: Sequence[ast.stmt], prefix: str) -> str:
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                return walk(node.body, f"{prefix}{node.name}.") or f"{prefix}{node.name}"
        return ""

    return walk(tree.body, "")


def removed(guard: Guard, source: str) -> str:
    """``source`` with ``guard`` removed; ``ValueError`` saying why when the edit no longer
    applies (the snippet is not there exactly once, or not inside the function)."""
    count = source.count(guard.old)
    if count != 1:
        raise ValueError(
            f"the source moved: the snippet is found {count} times in {guard.file} (wanted once)"
        )
    tree = ast.parse(source)
    span = _function_lines(tree, guard.function)
    start = source[: source.index(guard.old)].count("\n") + 1
    end = start + guard.old.count("\n")
    if span is None or not (span[0] <= start and end <= span[1]):
        where = _enclosing(tree, start) or "module level"
        raise ValueError(
            f"the source moved: the snippet is in {where}, not in {guard.function} "
            f"({guard.file}, line {start})"
        )
    changed = source.replace(guard.old, guard.new)
    ast.parse(changed)  # an edit that does not parse is a mistake in the list, not a catch
    return changed


def _forget_bytecode(path: Path) -> None:
    # A same-size edit within the same second would leave a stale .pyc in charge.
    for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        cached.unlink()


def _environment(copy: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env["PYTHONPATH"] = str(copy)
    env["LANGSMITH_TRACING"] = "false"
    return env


def run_tests(copy: Path, tests: Iterable[str]) -> tuple[int, str, float]:
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider"]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*command, *tests],
            cwd=copy,
            env=_environment(copy),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_S} s", time.monotonic() - started
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def check_imports_from(copy: Path) -> None:
    """The tests must import the copy's package, not the checkout's editable install."""
    found = subprocess.run(
        [sys.executable, "-c", "import memory_action; print(memory_action.__file__)"],
        cwd=copy,
        env=_environment(copy),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"guards: the scratch copy imports memory_action from {found}")


def try_guard(copy: Path, guard: Guard) -> Outcome:
    path = copy / guard.file
    original = path.read_text(encoding="utf-8")
    try:
        changed = removed(guard, original)
    except (ValueError, SyntaxError) as exc:
        return Outcome(
            guard=guard.name, caught_by=f"EDIT DOES NOT APPLY: {exc}", ok=False, seconds=0
        )
    path.write_text(changed, encoding="utf-8")
    _forget_bytecode(path)
    try:
        code, output, seconds = run_tests(copy, guard.tests)
    finally:
        path.write_text(original, encoding="utf-8")
        _forget_bytecode(path)
    failed = _FAILED.search(output)
    if code == 0:
        return Outcome(
            guard=guard.name, caught_by="SURVIVED: no test failed", ok=False, seconds=seconds
        )
    if code == 1 and failed:
        return Outcome(guard=guard.name, caught_by=failed.group(1), ok=True, seconds=seconds)
    last = output.strip().splitlines()[-1:] or ["no output"]
    return Outcome(
        guard=guard.name,
        caught_by=f"BROKE THE RUN (exit {code}, not a test failure): {last[0]}",
        ok=False,
        seconds=seconds,
    )


def table(outcomes: Sequence[Outcome]) -> str:
    lines = ["| guard | test that caught its removal | s |", "|---|---|---:|"]
    lines += [f"| {o.guard} | `{o.caught_by}` | {o.seconds:.1f} |" for o in outcomes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="guards whose name contains this text")
    parser.add_argument("--list", action="store_true", help="print the list and stop")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the run on the unchanged copy"
    )
    args = parser.parse_args(argv)
    guards = [g for g in GUARDS if args.only.lower() in g.name.lower()]
    if not guards:
        parser.error(f"no guard's name contains {args.only!r}; see --list")
    if args.list:
        for g in guards:
            print(f"{g.name}\n  {g.file}: {g.function}\n  protects: {g.protects}")
            print(f"  tests: {' '.join(g.tests)}")
        return 0
    with tempfile.TemporaryDirectory(prefix="memory-agent-guards-") as scratch:
        copy = scratch_copy(Path(scratch))
        check_imports_from(copy)
        if not args.no_reference:
            files = sorted({test.split("::")[0] for g in guards for test in g.tests})
            code, output, seconds = run_tests(copy, files)
            print(f"reference: {len(files)} test files on the unchanged copy, {seconds:.1f} s")
            if code != 0:
                print(output[-4_000:])
                print("guards: the tests fail without any guard removed; fix that first")
                return 2
        outcomes: list[Outcome] = []
        for guard in guards:
            outcome = try_guard(copy, guard)
            mark = "ok " if outcome.ok else "!! "
            print(f"{mark}{guard.name}: {outcome.caught_by} ({outcome.seconds:.1f} s)", flush=True)
            outcomes.append(outcome)
    print()
    print(table(outcomes))
    bad = [o for o in outcomes if not o.ok]
    total = sum(o.seconds for o in outcomes)
    print(
        f"\n{len(outcomes) - len(bad)} of {len(outcomes)} removals caught, {total:.0f} s of tests"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
