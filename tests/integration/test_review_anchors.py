"""Anchors over the real pull requests of the click corpus: random findings (seeded), some on
lines GitHub would refuse. Every anchor ``anchor()`` returns is accepted by the GitHub fake,
which validates them as GitHub does; every finding it refuses, sent as it is, is rejected (422)
unless GitHub would take it too (LEFT on an unchanged line: anchor() is stricter)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import requests

from memory_action.github.client import GitHubClient
from memory_action.github.pull_request import ChangedFile, Side
from memory_action.review.anchors import anchor, comment_body, side_lines
from memory_action.review.findings import Finding
from memory_action.review.patch import parse_patch
from memory_action.safety.outgoing import gate
from tests.fakes.click_corpus import ClickCorpus, CorpusPull
from tests.fakes.github_api import API_URL, REPOSITORY, FakeGitHub

SEED = 10
FINDINGS_PER_PULL = 120


@dataclass
class Figures:
    findings: int = 0
    anchored: int = 0
    rejected_anchored: int = 0  # anchors anchor() returned that the fake refused
    refused: int = 0  # findings anchor() refused
    refused_but_accepted: list[Finding] = field(default_factory=list)
    reviews: int = 0
    review_calls: int = 0  # requests of post_review, over every pull request


def random_findings(pull: CorpusPull, rng: random.Random, count: int) -> list[Finding]:
    """Findings a careless model might write: half on lines of the diff, half anywhere."""
    files = pull.files
    found: list[Finding] = []
    for _ in range(count):
        entry = rng.choice(files)
        path = entry["filename"] if rng.random() > 0.05 else "src/click/not_changed.py"
        side: Side = "RIGHT" if rng.random() < 0.75 else "LEFT"
        lines = sorted(_lines(entry.get("patch"), side))
        if lines and rng.random() < 0.5:
            line = rng.choice(lines)
        else:
            line = rng.randint(1, (max(lines) if lines else 50) + 20)
        start = max(1, line - rng.randint(0, 6)) if rng.random() < 0.3 else None
        suggestion = "pass" if rng.random() < 0.2 else None
        found.append(
            Finding(
                path=path,
                line=line,
                start_line=start,
                side=side,
                title=f"Finding on line {line}",
                body="Something to look at.",
                suggestion=suggestion,
            )
        )
    return found


def _lines(patch: str | None, side: Side) -> set[int]:
    return set(side_lines(parse_patch(patch), side)) if patch else set()


def _raw_post(number: int, finding: Finding) -> int:
    """The finding sent as it is, without the anchor check: GitHub's status code."""
    entry: dict[str, object] = {
        "path": finding.path,
        "line": finding.line,
        "side": finding.side,
        "body": comment_body(finding),
    }
    if finding.start_line is not None:
        entry |= {"start_line": finding.start_line, "start_side": finding.side}
    body = json.dumps({"event": "COMMENT", "body": "S", "comments": [entry]})
    url = f"{API_URL}:443/repos/{REPOSITORY}/pulls/{number}/reviews"
    return requests.post(url, data=body, timeout=5).status_code


def measure(corpus: ClickCorpus, seed: int = SEED, per_pull: int = FINDINGS_PER_PULL) -> Figures:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    figures = Figures()
    fake = FakeGitHub()
    for pull in corpus.pulls:
        fake.add_pull(pull.fake())
    client = GitHubClient("ghs_token", API_URL, REPOSITORY, retries=0)
    with fake.serve():
        for pull in corpus.pulls:
            files: list[ChangedFile] = client.pull_request(pull.number).changed_files()
            findings = random_findings(pull, rng, per_pull)
            anchored = [c for f in findings if (c := anchor(f, files, masked=())) is not None]
            refused = [f for f in findings if anchor(f, files, masked=()) is None]
            before, rejected = len(fake.calls), len(fake.reviews.rejected)
            posted = client.post_review(
                pull.number, pull.head_sha, gate("Review"), anchored, pause=lambda _: None
            )
            figures.review_calls += len(fake.calls) - before
            figures.reviews += len(posted.urls)
            figures.rejected_anchored += len(fake.reviews.rejected) - rejected
            figures.findings += len(findings)
            figures.anchored += len(anchored)
            figures.refused += len(refused)
            assert len(posted.comment_ids) == len(anchored)
            for finding in refused:
                if _raw_post(pull.number, finding) != 422:
                    figures.refused_but_accepted.append(finding)
    return figures


def test_no_anchor_is_rejected_and_every_refused_finding_would_be(
    click_corpus: ClickCorpus,
) -> None:
    figures = measure(click_corpus)
    assert figures.findings == 6 * FINDINGS_PER_PULL
    assert figures.rejected_anchored == 0
    # Both kinds are well represented: the check is not vacuous.
    assert figures.anchored > figures.findings // 4
    assert figures.refused > figures.findings // 4
    # What GitHub would take but anchor() refuses: only LEFT comments on unchanged lines.
    for finding in figures.refused_but_accepted:
        assert finding.side == "LEFT"
        assert finding.suggestion is None
    assert len(figures.refused_but_accepted) < figures.refused // 5
