"""action.yml, the README's Inputs and Outputs tables and the code agree: names and defaults.

The runner gives the container every input with action.yml's default; ``parse_settings`` must turn
those defaults into the code's own ``Settings()``, and the README must show the same names and
default values a user would write.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import yaml

from memory_action.publish.outcome import RunResult
from memory_action.review.budget import Cost
from memory_action.review.engine import ReviewResult
from memory_action.run.settings import LEARNED_FIELDS, Settings, parse_settings

ROOT = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"\$\{\{.*\}\}")  # a default the runner evaluates (github.token)


def action() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def readme_table(heading: str) -> list[list[str]]:
    """The cells of the first table under ``## heading`` in README.md, header row left out."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]*)`", cell)


def readme_default(cell: str) -> str:
    """A default as the README writes it: `` `''` `` is the empty string."""
    (value,) = code_spans(cell)
    return "" if value == "''" else value


def action_defaults() -> dict[str, str]:
    return {name: str(spec.get("default", "")) for name, spec in action()["inputs"].items()}


def test_inputs_are_the_settings_fields_and_the_readme_rows_in_the_same_order() -> None:
    fields = [f.name for f in dataclasses.fields(Settings) if f.name not in LEARNED_FIELDS]
    documented = [code_spans(row[0])[0] for row in readme_table("Inputs")]
    assert list(action()["inputs"]) == fields
    assert documented == fields


def test_the_readme_shows_action_yml_s_defaults() -> None:
    documented = {code_spans(row[0])[0]: readme_default(row[1]) for row in readme_table("Inputs")}
    assert documented == action_defaults()


def test_action_yml_s_defaults_parse_to_the_code_s_defaults() -> None:
    # As the runner passes them; an expression's value comes from the run (the token), not here.
    env = {
        f"INPUT_{name.upper()}": value
        for name, value in action_defaults().items()
        if not EXPRESSION.search(value)
    }
    assert parse_settings(env) == Settings()
    assert parse_settings({}) == Settings()


def test_only_github_token_defaults_to_an_expression() -> None:
    expressions = [name for name, value in action_defaults().items() if EXPRESSION.search(value)]
    assert expressions == ["github_token"]
    assert Settings().github_token.reveal() == ""  # no token unless the runner passes one


def test_outputs_are_what_a_review_run_sets_and_what_the_readme_lists() -> None:
    review = ReviewResult(
        answer="LGTM",
        outcome="reviewed",
        finished=True,
        cost=Cost(model_calls=1),
        reviewed=("a.py",),
        not_reviewed=(),
    )
    result = RunResult(
        memory_hit=True,
        memory_key="k",
        saved_key="s",
        memory_changed=True,
        comment_url="u",
        response="LGTM",
        review=review,
    )
    documented = [name for row in readme_table("Outputs") for name in code_spans(row[0])]
    assert list(action()["outputs"]) == list(result.outputs())
    assert documented == list(result.outputs())
