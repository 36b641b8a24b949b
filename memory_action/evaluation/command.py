"""``memory-agent eval``: the fixture tier's table, and its exit code (0 every target met, 1 any
missed)."""

from __future__ import annotations

from typing import TextIO

from memory_action.evaluation.report import table
from memory_action.evaluation.suite import arms, run_fixture_tier

EXIT_MET, EXIT_MISSED = 0, 1


def evaluate(*, quick: bool, out: TextIO, err: TextIO) -> int:
    def progress(step: str) -> None:
        print(f"eval: {step}", file=err, flush=True)

    outcome = run_fixture_tier(quick=quick, progress=progress)
    notes = [
        "Targets apply to memory. Baselines, emulated from outside the action: no memory:",
        "enable_memory false; no veto, no trust: GitHub answers everyone as a writer and every",
        "proposal is ticked; whole AGENTS.md: the reviewer reads the stored file as plain text.",
        f"{outcome.episodes} episodes, {outcome.runs} runs of the action; the reviewer is the",
        "gullible scripted one (docs/evaluation.md).",
    ]
    if outcome.unvalidated is not None:
        notes.append(
            "UNVALIDATED: the GitHub fake was not checked against GitHub's descriptions: "
            f"{outcome.unvalidated}."
        )
    else:
        notes.append(f"GitHub contract: {len(outcome.contract_violations)} violations.")
    notes += [f"  {v}" for v in outcome.contract_violations[:10]]
    tier = "quick fixture tier" if quick else "fixture tier"
    print(table(f"memory-agent eval: {tier}", outcome.metrics, arms(), notes), file=out, end="")
    return EXIT_MET if outcome.met else EXIT_MISSED
