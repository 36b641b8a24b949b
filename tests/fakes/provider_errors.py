"""The errors GitHub Models answers with, as the OpenAI SDK raises them (langchain-openai passes
them on): 413 ``tokens_limit_reached`` and 429 per minute or per day, with their headers. The
bodies and headers are the ones ``shared/docs/github-models-limits.md`` records."""

from __future__ import annotations

import httpx
import openai

URL = "http://127.0.0.1/inference/chat/completions"

TOO_LARGE = {
    "error": {
        "code": "tokens_limit_reached",
        "message": "Request body too large for gpt-4.1-mini model. Max size: 8000 tokens.",
        "details": "",
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


def provider_error(
    status: int, body: dict[str, object], headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    request = httpx.Request("POST", URL)
    response = httpx.Response(status, json=body, headers=headers or {}, request=request)
    kind = openai.RateLimitError if status == 429 else openai.APIStatusError
    return kind(f"Error code: {status} - {body}", response=response, body=body)


def too_large() -> openai.APIStatusError:
    return provider_error(413, TOO_LARGE)


def daily_quota() -> openai.APIStatusError:
    return provider_error(
        429, DAILY, {"retry-after": "24367", "x-ratelimit-type": "UserByModelByDay"}
    )


def minute_limit(retry_after: int = 12) -> openai.APIStatusError:
    return provider_error(
        429,
        MINUTE,
        {"retry-after": str(retry_after), "x-ratelimit-type": "UserByModelByMinute"},
    )
