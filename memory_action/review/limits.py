"""The provider's limit answers, as GitHub Models gives them, and what the engine does about each.

- 413 ``tokens_limit_reached`` (or any context-overflow error): ``RequestTooLargeError``; the engine
  shrinks its batches once and retries, then reviews what fits. Never a loop.
- 429 per minute or concurrency: wait ``retry-after`` when that is short and the run's deadline
  allows, at most ``MAX_WAITS`` times a request.
- 429 daily quota (``x-ratelimit-type: UserByModelByDay``): ``DailyQuotaError`` at once; a daily
  limit is not worth waiting for inside a job.

``ProviderLimits`` is the innermost middleware, so a wait happens around the HTTP call only.
SDK retries are off for the models the engine drives (``max_retries=0``): the SDK would retry a
daily 429 a few times and spend what is left of the run for nothing.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage

from memory_action.errors import AgentError

MAX_WAIT_S = 90.0  # longer than this is not "short": the run would rather stop
MAX_WAITS = 3
DEFAULT_WAIT_S = 20.0  # a 429 without retry-after
DAILY = "UserByModelByDay"
_DAILY_TEXT = re.compile(r"UserByModelByDay|per 86400s", re.I)
_WAIT_TEXT = re.compile(r"wait ([0-9]{1,9}) seconds", re.I)

_Result = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


class RequestTooLargeError(AgentError):
    """A request over the input limit: the provider refused it (HTTP 413 or a context overflow),
    or, ``sent`` false, our own estimate kept it from going out (no provider ever saw it)."""

    def __init__(self, message: str, *, estimated: int = 0, sent: bool = True) -> None:
        super().__init__(message)
        self.estimated = estimated  # our estimate of the refused request, 0 when unknown
        self.sent = sent


class DailyQuotaError(AgentError):
    """The token's daily quota for this model is used up; ``retry_after_s`` says until when."""

    def __init__(self, message: str, *, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, kw_only=True)
class LimitAnswer:
    kind: str  # too_large | minute | daily | other
    retry_after_s: float | None
    message: str


def classify(exc: BaseException) -> LimitAnswer:
    """What a failed model call says about the provider's limits."""
    status = getattr(exc, "status_code", None)
    headers = _headers(exc)
    message = _message(exc)
    retry_after = _retry_after(headers, message)
    if status == 413 or isinstance(exc, ContextOverflowError) or "tokens_limit_reached" in message:
        return LimitAnswer(kind="too_large", retry_after_s=None, message=message)
    if status == 429:
        daily = headers.get("x-ratelimit-type", "") == DAILY or bool(_DAILY_TEXT.search(message))
        return LimitAnswer(
            kind="daily" if daily else "minute", retry_after_s=retry_after, message=message
        )
    return LimitAnswer(kind="other", retry_after_s=None, message=message)


def _headers(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _message(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__


def _retry_after(headers: Mapping[str, str], message: str) -> float | None:
    raw = headers.get("retry-after", "").strip()
    if re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,9})?", raw):
        return float(raw)
    found = _WAIT_TEXT.search(message)
    return float(found.group(1)) if found else None


def quota_text(retry_after_s: float | None) -> str:
    """One line for people: the day's quota is used, and roughly when it frees up."""
    if retry_after_s is None:
        when = "it frees up within a day"
    else:
        hours = retry_after_s / 3600
        when = (
            f"it frees up in about {math.ceil(retry_after_s / 60)} minutes"
            if hours < 1
            else f"it frees up in about {hours:.0f} hours"
        )
    return f"The model's daily request quota for this token is used up; {when}."


class ProviderLimits(AgentMiddleware[AgentState[Any], Any, Any]):
    """Waits out short 429s; turns 413 and the daily 429 into the engine's own errors."""

    def __init__(
        self,
        *,
        deadline: float,
        estimate: Callable[[ModelRequest[Any]], int],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        self._deadline = deadline
        self._estimate = estimate
        self._clock = clock
        self._sleep = sleep

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> _Result:
        for attempt in range(MAX_WAITS + 1):
            try:
                return handler(request)
            except Exception as exc:
                wait = self._wait_or_raise(exc, request, attempt)
            self._sleep(wait)
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    def _wait_or_raise(self, exc: Exception, request: ModelRequest[Any], attempt: int) -> float:
        answer = classify(exc)
        if answer.kind == "too_large":
            raise RequestTooLargeError(
                f"The model provider refused the request as too large: {answer.message}",
                estimated=self._estimate(request),
            ) from exc
        if answer.kind == "daily":
            raise DailyQuotaError(
                quota_text(answer.retry_after_s), retry_after_s=answer.retry_after_s
            ) from exc
        wait = answer.retry_after_s if answer.retry_after_s is not None else DEFAULT_WAIT_S
        short = wait <= MAX_WAIT_S and self._clock() + wait < self._deadline
        if answer.kind != "minute" or attempt >= MAX_WAITS or not short:
            raise exc
        return wait
