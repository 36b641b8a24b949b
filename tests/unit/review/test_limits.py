"""What GitHub Models' limit answers become: 413, 429 per minute, 429 per day."""

from __future__ import annotations

import pytest

from memory_action.review.limits import classify, quota_text
from tests.fakes.provider_errors import DAILY, MINUTE, TOO_LARGE, provider_error


def test_413_tokens_limit_reached_is_too_large() -> None:
    assert classify(provider_error(413, TOO_LARGE, {})).kind == "too_large"


def test_daily_429_by_header() -> None:
    answer = classify(
        provider_error(429, DAILY, {"retry-after": "24367", "x-ratelimit-type": "UserByModelByDay"})
    )
    assert (answer.kind, answer.retry_after_s) == ("daily", 24367.0)


def test_daily_429_by_message_when_the_header_is_missing() -> None:
    answer = classify(provider_error(429, DAILY, {}))
    assert (answer.kind, answer.retry_after_s) == ("daily", 24367.0)


@pytest.mark.parametrize("kind", ["UserByModelByMinute", "UserConcurrentRequests"])
def test_minute_and_concurrency_429_wait_retry_after(kind: str) -> None:
    answer = classify(provider_error(429, MINUTE, {"retry-after": "12", "x-ratelimit-type": kind}))
    assert (answer.kind, answer.retry_after_s) == ("minute", 12.0)


def test_other_errors_are_not_limits() -> None:
    assert classify(RuntimeError("boom")).kind == "other"


def test_quota_text_says_roughly_when_it_frees_up() -> None:
    assert quota_text(24_367) == (
        "The model's daily request quota for this token is used up; it frees up in about 7 hours."
    )
    assert "about 5 minutes" in quota_text(290)
    assert "within a day" in quota_text(None)
