"""Exact token counts for the models whose tokenizer is public: OpenAI's o200k and cl100k.

The encodings' rank files ship inside the package (``encodings/*.tiktoken.gz``, the files
``tiktoken`` would otherwise download on first use, which a runner without internet egress
cannot do; their SHA-256 is the one ``tiktoken`` checks, and a test checks it too). ``tiktoken``
does the counting; an encoding is loaded on its first count (seconds on a busy 2-core machine:
``bench/tokenizers.py``), never at import, so a run that counts nothing pays nothing. Every
other model keeps the estimate (``tokens``).
"""

from __future__ import annotations

import binascii
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

O200K, CL100K = "o200k_base", "cl100k_base"

# The pre-tokenizers, as tiktoken_ext.openai_public defines them (a test compares).
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_PATTERNS = {O200K: _O200K_PATTERN, CL100K: _CL100K_PATTERN}
_SPECIAL = {
    O200K: {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    CL100K: {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}

# Model names (the part after a GitHub Models publisher, ``openai/gpt-4o-mini``) and the
# encoding OpenAI documents for them; first match wins, anything else has no exact count.
_MODELS: tuple[tuple[str, str], ...] = (
    (r"(chatgpt-)?gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[1345](-|$)", O200K),
    (r"gpt-4|gpt-3\.5|text-embedding-(3|ada-002)", CL100K),
)
_PROVIDERS = frozenset({"openai", "github"})


def encoding_for(provider: str, model: str) -> str | None:
    """The encoding ``provider:model`` counts with, or None when it is not known to be public."""
    if provider not in _PROVIDERS:
        return None
    bare = model.rsplit("/", 1)[-1].lower()
    return next((name for pattern, name in _MODELS if re.match(pattern, bare)), None)


def rank_file(name: str) -> bytes:
    """The encoding's rank file as tiktoken publishes it (one ``base64 rank`` line a token)."""
    # Imported here: every run imports this module (through the profile), few count exactly.
    import gzip  # noqa: PLC0415
    from importlib import resources  # noqa: PLC0415

    data = resources.files("memory_action.model").joinpath(f"encodings/{name}.tiktoken.gz")
    return gzip.decompress(data.read_bytes())


def ranks(name: str) -> dict[bytes, int]:
    """Each token's bytes and rank (binascii, not base64.b64decode: a third of the time)."""
    return {
        binascii.a2b_base64(token): int(rank)
        for token, rank in (line.split(b" ") for line in rank_file(name).split(b"\n") if line)
    }


def _load(name: str) -> tiktoken.Encoding:
    import tiktoken  # noqa: PLC0415 - a run that counts nothing exactly never imports it

    return tiktoken.Encoding(
        name, pat_str=_PATTERNS[name], mergeable_ranks=ranks(name), special_tokens=_SPECIAL[name]
    )


@dataclass(kw_only=True)
class Tokenizer:
    """One encoding, loaded on the first count (thread-safe); text is counted as text, so a
    diff that contains ``<|endoftext|>`` counts it as the characters it is."""

    encoding: str

    def __post_init__(self) -> None:
        if self.encoding not in _PATTERNS:
            raise ValueError(f"no shipped encoding {self.encoding!r}: one of {sorted(_PATTERNS)}")
        self._lock = threading.Lock()
        self._loaded: tiktoken.Encoding | None = None

    def count(self, text: str) -> int:
        return len(self.encoding_of().encode_ordinary(text))

    def prefix(self, text: str, tokens: int) -> str:
        """The longest start of ``text`` that is at most ``tokens`` tokens."""
        if tokens <= 0:
            return ""
        encoded = self.encoding_of().encode_ordinary(text)
        if len(encoded) <= tokens:
            return text
        kept = self.encoding_of().decode_bytes(encoded[:tokens]).decode("utf-8", errors="ignore")
        while kept and self.count(kept) > tokens:  # a cut inside a merge can count differently
            kept = kept[:-1]
        return kept

    def encoding_of(self) -> tiktoken.Encoding:
        """tiktoken's encoder, loaded now if it was not yet."""
        with self._lock:
            if self._loaded is None:
                self._loaded = _load(self.encoding)
            return self._loaded


_SHARED: dict[str, Tokenizer] = {}
_SHARED_LOCK = threading.Lock()


def shared(encoding: str) -> Tokenizer:
    """The process's one tokenizer of ``encoding`` (o200k takes about 80 MB loaded)."""
    with _SHARED_LOCK:
        if encoding not in _SHARED:
            _SHARED[encoding] = Tokenizer(encoding=encoding)
        return _SHARED[encoding]
