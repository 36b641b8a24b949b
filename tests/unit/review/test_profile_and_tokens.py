"""The model profile table, the token estimate and its calibration, the memory budget rule."""

from __future__ import annotations

import math

import pytest

from memory_action.errors import render
from memory_action.local.words import cli_words
from memory_action.model.profile import (
    GITHUB_HIGH,
    GITHUB_LOW,
    memory_kb_that_fits,
    profile_for,
)
from memory_action.model.tokens import MIN_FACTOR, SAFETY, TokenEstimator, text_tokens


@pytest.mark.parametrize(
    ("provider", "model", "tokens_in", "tokens_out", "limits"),
    [
        ("github", "openai/gpt-4.1-mini", 8_000, 4_000, GITHUB_LOW),
        ("github", "openai/gpt-4o-mini", 8_000, 4_000, GITHUB_LOW),
        ("github", "openai/gpt-4.1", 8_000, 4_000, GITHUB_HIGH),
        ("github", "openai/gpt-4o", 8_000, 4_000, GITHUB_HIGH),
        ("github", "some-vendor/unknown-model", 8_000, 4_000, GITHUB_HIGH),
        ("openai", "gpt-4.1-mini", 1_047_576 - 32_768, 32_768, None),
        ("openai", "gpt-4o", 128_000 - 16_384, 16_384, None),
        ("anthropic", "claude-sonnet-4-5", 200_000 - 8_192, 8_192, None),
        ("openai", "llama3.1:8b", 8_000, 2_000, None),  # a local server's model: a guess
    ],
)
def test_profile_table(
    provider: str, model: str, tokens_in: int, tokens_out: int, limits: object
) -> None:
    profile = profile_for(provider, model)
    assert (profile.input_tokens, profile.output_tokens, profile.rate_limits) == (
        tokens_in,
        tokens_out,
        limits,
    )


def test_free_tier_limits_are_the_documented_ones() -> None:
    assert (GITHUB_LOW.per_minute, GITHUB_LOW.per_day, GITHUB_LOW.concurrent) == (15, 150, 5)
    assert (GITHUB_HIGH.per_minute, GITHUB_HIGH.per_day, GITHUB_HIGH.concurrent) == (10, 50, 2)


def test_max_input_tokens_overrides_the_table_and_says_so() -> None:
    profile = profile_for("github", "openai/gpt-4.1-mini", max_input_tokens=64_000)
    assert profile.input_tokens == 64_000
    assert "(max_input_tokens: 64000)" in profile.describe()
    assert "15/min, 150/day (low tier)" in profile.describe()
    # One description, each interface's words: the CLI names its flag.
    assert "(--max-input-tokens 64000)" in render(profile.words(), cli_words)


def test_memory_budget_leaves_room_for_the_pull_request() -> None:
    assert memory_kb_that_fits(8_000) == 7
    assert memory_kb_that_fits(5_000) == 0
    assert memory_kb_that_fits(10_000_000) == 1024


def test_the_estimate_is_conservative_for_real_diff_density() -> None:
    # The densest real diffs run 2.9 characters a token; the estimate is 3, plus framing.
    estimator = TokenEstimator()
    assert text_tokens("x" * 300) == 100
    assert estimator.count_request("x" * 300, ["y" * 300]) > 200


def test_calibration_grows_when_the_provider_counts_more() -> None:
    estimator = TokenEstimator()
    estimator.calibrate(estimated=1_000, actual=1_500)
    assert estimator.factor == pytest.approx(1.5 * SAFETY)
    assert estimator.count("x" * 300) == math.ceil(100 * 1.5 * SAFETY)


def test_calibration_shrinks_but_never_below_the_floor() -> None:
    estimator = TokenEstimator()
    estimator.calibrate(estimated=1_000, actual=500)
    assert estimator.factor == MIN_FACTOR


def test_a_refused_request_raises_the_factor_past_the_limit() -> None:
    estimator = TokenEstimator()
    estimator.at_least(estimated=7_000, limit=8_000)
    assert estimator.count_request("", []) >= 0
    assert 7_000 * estimator.factor > 8_000


def test_chars_for_is_the_inverse_of_count() -> None:
    estimator = TokenEstimator(factor=1.2)
    chars = estimator.chars_for(1_000)
    assert estimator.count("x" * chars) <= 1_000 < estimator.count("x" * (chars + 10))
