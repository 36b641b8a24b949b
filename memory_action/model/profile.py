"""What the chosen model accepts: the input limit of one request, the output cap, and, for
GitHub Models' free tier, the rate limits (GitHub docs, "Prototyping with AI models").

A profile decides how much the engine puts in one request and the output cap each request sends
(``max_tokens``). ``max_input_tokens`` overrides the table for paid GitHub Models, Enterprise
limits or a local server; without it, what a local server says of its window (``ServedWindow``,
asked by ``server_window``) replaces the guess for a model the table does not know.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from memory_action.errors import Setting, Words, render
from memory_action.model.tokenizer import encoding_for

CHARS_PER_TOKEN = 3.0  # the estimate every count and budget uses (``review.tokens``)

# GitHub Models' free tier: every model takes 8,000 tokens in and gives at most 4,000 out.
GITHUB_FREE_INPUT = 8_000
GITHUB_FREE_OUTPUT = 4_000
# An OpenAI-compatible server we know nothing about (a local model): assume a small window and
# say how to raise it.
UNKNOWN_SERVER_INPUT = 8_000
UNKNOWN_SERVER_OUTPUT = 2_000


# What a review request holds besides memory and the diff: the system prompt, the memory
# guidelines, the tool schemas, the pull request's header and file list (a test measures it).
REVIEW_OVERHEAD_TOKENS = 3_000
# The least room a request keeps for the diff: below it, reviews of real pull requests take
# too many requests to be worth it.
MIN_DIFF_TOKENS = 2_500


@dataclass(frozen=True, kw_only=True)
class RateLimits:
    per_minute: int
    per_day: int
    concurrent: int


@dataclass(frozen=True, kw_only=True)
class ModelProfile:
    provider: str
    model: str
    input_tokens: int  # the most one request may hold: prompt, tools, conversation
    output_tokens: int  # the most one answer may hold: sent as the request's max_tokens
    rate_limits: RateLimits | None = None  # known free-tier limits, else None
    tier: str = ""  # GitHub Models: low | high
    source: str = "table"  # table | max_input_tokens | server | guess
    encoding: str = ""  # the model's public tokenizer (``tokenizer``): counted exactly, else ""
    origin: str = ""  # with source "server": which answer of the server said so

    def describe(self) -> str:
        """``words`` in the action's words."""
        return render(self.words())

    def words(self) -> Words:
        """The limits, and where the window came from, naming the setting that sets it."""
        limits = ""
        if self.rate_limits is not None:
            r = self.rate_limits
            limits = f"; {r.per_minute}/min, {r.per_day}/day ({self.tier} tier)"
        window = Setting(name="max_input_tokens")
        origin: Words = {
            "max_input_tokens": (
                " (",
                Setting(name=window.name, value=str(self.input_tokens)),
                ")",
            ),
            "guess": (" (assumed: the server did not say; set ", window, ")"),
            "server": (f" (the server's window: {self.origin})",),
            "table": (" (the known limit of this model)",),
        }.get(self.source, ())
        return (
            f"{self.provider}:{self.model}: {self.input_tokens:,} tokens in",
            *origin,
            f", {self.output_tokens:,} out{limits}",
        )


GITHUB_LOW = RateLimits(per_minute=15, per_day=150, concurrent=5)
GITHUB_HIGH = RateLimits(per_minute=10, per_day=50, concurrent=2)
# Low-tier models on GitHub Models: the small ones. Anything else is treated as high tier, whose
# limits are the stricter ones.
_GITHUB_LOW_TIER = re.compile(r"(mini|nano|small|phi|8b|3b|1b|ministral|codestral)", re.I)

# (pattern, input window, output cap) for providers' own endpoints; first match wins.
_OPENAI: tuple[tuple[str, int, int], ...] = (
    (r"gpt-4\.1", 1_047_576, 32_768),
    (r"gpt-5", 400_000, 128_000),
    (r"o[134](-|$)", 200_000, 100_000),
    (r"gpt-4o", 128_000, 16_384),
    (r"gpt-4-turbo", 128_000, 4_096),
    (r"gpt-3\.5", 16_385, 4_096),
)
_ANTHROPIC: tuple[tuple[str, int, int], ...] = ((r"claude", 200_000, 8_192),)


@dataclass(frozen=True, kw_only=True)
class ServedWindow:
    """What a server said its model's context window is (prompt and answer together)."""

    tokens: int
    origin: str  # the answer that said so, e.g. "llama.cpp GET /v1/models meta.n_ctx 16,384"


def profile_for(
    provider: str,
    model: str,
    *,
    max_input_tokens: int | None = None,
    served: ServedWindow | None = None,
) -> ModelProfile:
    """The profile of ``provider:model``; ``max_input_tokens`` replaces the input limit, and a
    ``served`` window replaces the guess for a model the table does not know."""
    found = replace(_table_profile(provider, model), encoding=encoding_for(provider, model) or "")
    if max_input_tokens is not None:
        return replace(found, input_tokens=max_input_tokens, source="max_input_tokens")
    if served is None or found.source != "guess":
        return found
    # The window holds the answer too: a small window keeps three quarters for the request.
    output = min(UNKNOWN_SERVER_OUTPUT, served.tokens // 4)
    return replace(
        found,
        input_tokens=served.tokens - output,
        output_tokens=output,
        source="server",
        origin=served.origin,
    )


def _table_profile(provider: str, model: str) -> ModelProfile:
    if provider == "github":
        low = bool(_GITHUB_LOW_TIER.search(model))
        return ModelProfile(
            provider=provider,
            model=model,
            input_tokens=GITHUB_FREE_INPUT,
            output_tokens=GITHUB_FREE_OUTPUT,
            rate_limits=GITHUB_LOW if low else GITHUB_HIGH,
            tier="low" if low else "high",
        )
    table = _ANTHROPIC if provider == "anthropic" else _OPENAI
    bare = model.rsplit("/", 1)[-1].lower()
    for pattern, window, output in table:
        if re.match(pattern, bare):
            # The window holds the answer too: what is left for the request is the input limit.
            return ModelProfile(
                provider=provider, model=model, input_tokens=window - output, output_tokens=output
            )
    # A model we do not know (a local server's, say): a careful guess, raised by max_input_tokens.
    return ModelProfile(
        provider=provider,
        model=model,
        input_tokens=UNKNOWN_SERVER_INPUT,
        output_tokens=UNKNOWN_SERVER_OUTPUT,
        source="guess",
    )


def memory_kb_that_fits(input_tokens: int) -> int:
    """The largest memory budget (KiB) that leaves a request room for the pull request."""
    room = input_tokens - REVIEW_OVERHEAD_TOKENS - MIN_DIFF_TOKENS
    return max(0, min(1024, math.floor(room * CHARS_PER_TOKEN / 1024)))
