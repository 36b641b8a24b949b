"""What GitHub Models' limit answers become: 413, 429 per minute, 429 per day."""

from __future__ import annotations

import httpx
import openai
import pytest

from memory_action.review.limits import classify, quota_text

URL = "http://127.0.0.1/v1/chat/completions"


def _error(status: int, body: dict[str, object], headers: dict[str, str]) -> openai.APIStatusError:
    request = httpx.Request("POST", URL)
    response = httpx.Response(status, json=body, headers=headers, request=request)
    kind = {413: openai.APIStatusError, 429: openai.RateLimitError}[status]
    return kind(f"Error code: {status} - {body}", response=response, body=body)


TOO_LARGE = {
    "error": {
        "code": "tokens_limit_reached",
        "message": "Request body too large for gpt-4.1-mini model. Max size: 8000 tokens.",
    }
}
DAILY = {
    "error": {
        "code": "RateLimitReached",
        "message": "Rate limit of 150 per 86400s exceeded for UserByModelByDay. Please wait "
        "24367 seconds before retrying.",
    }
}
MINUTE = {
    "error": {
        "code": "RateLimitReached",
        "message": "Rate limit of 15 per 60s exceeded for UserByModelByMinute. Please wait 12 "
        "seconds before retrying.",
    }
}


def test_413_tokens_limit_reached_is_too_large() -> None:
    assert classify(_error(413, TOO_LARGE, {})).kind == "too_large"


def test_daily_429_by_header() -> None:
    answer = classify(
        _error(429, DAILY, {"retry-after": "24367", "x-ratelimit-type": "UserByModelByDay"})
    )
    assert (answer.kind, answer.retry_after_s) == ("daily", 24367.0)


def test_daily_429_by_message_when_the_header_is_missing() -> None:
    answer = classify(_error(429, DAILY, {}))
    assert (answer.kind, answer.retry_after_s) == ("daily", 24367.0)


@pytest.mark.parametrize("kind", ["UserByModelByMinute", "UserConcurrentRequests"])
def test_minute_and_concurrency_429_wait_retry_after(kind: str) -> None:
    answer = classify(_error(429, MINUTE, {"retry-after": "12", "x-ratelimit-type": kind}))
    assert (answer.kind, answer.retry_after_s) == ("minute", 12.0)


def test_other_errors_are_not_limits() -> None:
    assert classify(RuntimeError("boom")).kind == "other"


def test_quota_text_says_roughly_when_it_frees_up() -> None:
    assert quota_text(24_367) == (
        "The model's daily request quota for this token is used up; it frees up in about 7 hours."
    )
    assert "about 5 minutes" in quota_text(290)
    assert "within a day" in quota_text(None)
