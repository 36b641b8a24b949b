"""The shipped encodings are tiktoken's own, counted offline, loaded only when first used."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import Any

import pytest
import tiktoken
from tiktoken_ext import openai_public

from memory_action.model import tokenizer
from memory_action.model.tokenizer import CL100K, O200K, Tokenizer, encoding_for
from memory_action.model.tokens import TokenEstimator

SAMPLES = (
    "def f(x):\n    return x  # it's   spaced\r\n\tTabs, CamelCase and SHOUTING'll split",
    "日本語のテキスト、中文文本, Ελληνικά, emoji 🎉🚀 and numbers 1234567 3.14159",
    "+{[(<>)]}=>!==&&||;; base64: QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo= <|endoftext|> end",
)


@pytest.mark.parametrize("name", [O200K, CL100K])
def test_the_shipped_encoding_is_the_one_tiktoken_publishes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same file (the SHA-256 tiktoken checks), and it encodes as tiktoken's own definition of
    the encoding (its pre-tokenizer, its special tokens) built on that file."""
    asked: dict[str, Any] = {}

    def load(path: str, expected_hash: str) -> dict[bytes, int]:
        asked["hash"] = expected_hash
        return tokenizer.ranks(name)

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", load)
    published = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    assert hashlib.sha256(tokenizer.rank_file(name)).hexdigest() == asked["hash"]
    ours = Tokenizer(encoding=name).encoding_of()
    assert ours.special_tokens_set == published.special_tokens_set
    for text in SAMPLES:
        assert ours.encode(text, allowed_special="all") == published.encode(
            text, allowed_special="all"
        )


def test_counts_are_the_tokenizers_and_special_tokens_count_as_text() -> None:
    o200k = Tokenizer(encoding=O200K)
    assert o200k.count("hello world") == 2
    assert o200k.count("<|endoftext|>") > 1  # never the one special token


def test_a_prefix_never_counts_more_than_asked_and_keeps_whole_characters() -> None:
    o200k = Tokenizer(encoding=O200K)
    text = "日本語のテキストは漢字と仮名で書かれています。" * 20 + "def f(x): return x\n" * 20
    for tokens in (0, 1, 7, 50, 300):
        cut = o200k.prefix(text, tokens)
        assert text.startswith(cut)
        assert o200k.count(cut) <= tokens
        assert o200k.count(text[: len(cut) + 1]) > tokens or len(cut) == len(text)
    assert o200k.prefix("short", 100) == "short"


@pytest.mark.parametrize(
    ("provider", "model", "encoding"),
    [
        ("github", "openai/gpt-4o-mini", O200K),
        ("github", "openai/gpt-4.1", O200K),
        ("github", "openai/o3-mini", O200K),
        ("github", "openai/gpt-5-nano", O200K),
        ("openai", "gpt-4o-2024-08-06", O200K),
        ("openai", "o1", O200K),
        ("openai", "gpt-4-turbo", CL100K),
        ("openai", "gpt-3.5-turbo", CL100K),
        ("github", "meta/llama-3.3-70b-instruct", None),
        ("github", "mistral-ai/codestral-2501", None),
        ("anthropic", "claude-sonnet-4", None),
        ("openai", "qwen2.5-coder", None),  # an OpenAI-compatible server's own model
    ],
)
def test_models_map_to_their_encoding(provider: str, model: str, encoding: str | None) -> None:
    assert encoding_for(provider, model) == encoding


def test_an_exact_count_is_never_calibrated_below_the_tokenizer() -> None:
    estimator = TokenEstimator.for_encoding(O200K)
    text = "x = 1\n" * 100
    exact = estimator.count(text)
    estimator.calibrate(exact, exact // 2)  # the provider says half: it frames less than we do
    assert estimator.count(text) == exact
    estimator.calibrate(exact, exact * 2)  # more: believed, with room
    assert estimator.count(text) > 2 * exact


def test_importing_the_counters_loads_no_encoding() -> None:
    """Startup pays nothing: tiktoken and the ranks load on the first exact count."""
    code = (
        "import sys, memory_action.model.tokens, memory_action.review.engine;"
        "print('tiktoken' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
