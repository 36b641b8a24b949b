"""Planted secrets: fake but realistic-looking values of every format the scrubber knows.

Every value is assembled at import time from a seeded generator and short literal prefixes, so
this file holds no contiguous token that a secret scanner would flag, and the values are the same
on every run.

- ``PLANTED``: ``(kind, secret)`` pairs; ``kind`` is what ``find_secrets`` names it.
- ``MASKED_VALUES``: what a run would have masked; pass them as ``masked=`` (the ``masked secret``
  entries, and the encoded forms among them, are only found with these).
- ``standalone(kind, secret)``: text that is found on its own, e.g. ``password = "…"`` around a
  bare credential value, or the value itself for a self-identifying token.
- ``ORDINARY``: memory lines that hold no secret (SHAs, UUIDs, digests, versions, placeholders).
"""

from __future__ import annotations

import base64
import random
import string
from urllib.parse import quote

from memory_action.memory import scrub

_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_BASE64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"

_random = random.Random(20240601)  # noqa: S311 - fake values, not cryptography


def _chars(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_random.choice(alphabet) for _ in range(n))


def _b64url_json(payload: str) -> str:
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def _private_key(label: str, body_lines: int = 6) -> str:
    dashes = "-" * 5
    body = "\n".join(_chars(64, _BASE64) for _ in range(body_lines))
    tail = _chars(12, _BASE64) + "=="
    return f"{dashes}BEGIN {label}{dashes}\n{body}\n{tail}\n{dashes}END {label}{dashes}"


def _jwt(claims: str) -> str:
    header = _b64url_json('{"alg":"HS256","typ":"JWT"}')
    return f"{header}.{_b64url_json(claims)}.{_chars(43, _URLSAFE)}"


# What the run masked: a password with symbols, a passphrase of words, a deploy key.
MASKED_PASSWORD = _chars(10) + "@#%" + _chars(7) + " !"
MASKED_PASSPHRASE = "-".join(("correct", "horse", "battery", "staple", _chars(4, string.digits)))
MASKED_DEPLOY_KEY = _chars(28)
MASKED_VALUES: tuple[str, ...] = (MASKED_PASSWORD, MASKED_PASSPHRASE, MASKED_DEPLOY_KEY)

PLANTED: list[tuple[str, str]] = [
    # GitHub: classic (ghp, gho, ghu, ghs, ghr) and fine-grained tokens
    *((scrub.GITHUB_TOKEN, f"{prefix}_{_chars(36)}") for prefix in ("ghp", "gho", "ghu", "ghs")),
    (scrub.GITHUB_TOKEN, "ghr_" + _chars(76)),
    (scrub.GITHUB_TOKEN, "github" + "_pat_" + _chars(22) + "_" + _chars(59)),
    (scrub.GITHUB_TOKEN, "github" + "_pat_" + _chars(82)),
    # AWS
    *((scrub.AWS_ACCESS_KEY_ID, p + _chars(16, _UPPER_DIGITS)) for p in ("AKIA", "ASIA")),
    *((scrub.AWS_ACCESS_KEY_ID, p + _chars(16, _UPPER_DIGITS)) for p in ("ABIA", "ACCA")),
    (scrub.AWS_SECRET_ACCESS_KEY, _chars(18, _BASE64) + "/" + _chars(21, _BASE64)),
    (scrub.AWS_SECRET_ACCESS_KEY, _chars(40)),
    # OpenAI: classic, project, service account, admin
    (scrub.OPENAI_API_KEY, "sk-" + _chars(20) + "T3Blbk" + "FJ" + _chars(20)),
    (scrub.OPENAI_API_KEY, "sk-" + "proj-" + _chars(74, _URLSAFE) + "A"),
    (scrub.OPENAI_API_KEY, "sk-" + "svcacct-" + _chars(64, _URLSAFE) + "Q"),
    (scrub.OPENAI_API_KEY, "sk-" + "admin-" + _chars(48, _URLSAFE) + "z"),
    # Anthropic
    (scrub.ANTHROPIC_API_KEY, "sk-" + "ant-api03-" + _chars(93, _URLSAFE) + "AA"),
    (scrub.ANTHROPIC_API_KEY, "sk-" + "ant-admin01-" + _chars(93, _URLSAFE) + "AA"),
    # Slack
    (scrub.SLACK_TOKEN, "xo" + "xb-" + _chars(13, string.digits) + "-" + _chars(24)),
    (scrub.SLACK_TOKEN, "xo" + "xp-" + "-".join(_chars(12, string.digits) for _ in range(3))),
    (scrub.SLACK_TOKEN, "xo" + "xa-2-" + _chars(12, string.digits) + "-" + _chars(32, _HEX)),
    (scrub.SLACK_TOKEN, "xo" + "xr-" + _chars(12, string.digits) + "-" + _chars(30)),
    (scrub.SLACK_TOKEN, "xo" + "xs-" + _chars(12, string.digits) + "-" + _chars(40, _HEX)),
    (scrub.SLACK_TOKEN, "xa" + "pp-1-A" + _chars(10, _UPPER_DIGITS) + "-" + _chars(64, _HEX)),
    (
        scrub.SLACK_WEBHOOK,
        "https://hooks."
        + "slack.com/services/T"
        + _chars(8, _UPPER_DIGITS)
        + "/B"
        + _chars(10, _UPPER_DIGITS)
        + "/"
        + _chars(24),
    ),
    # Private keys: whole blocks, one without its END line
    (scrub.PRIVATE_KEY, _private_key("RSA PRIVATE KEY")),
    (scrub.PRIVATE_KEY, _private_key("OPENSSH PRIVATE KEY")),
    (scrub.PRIVATE_KEY, _private_key("EC PRIVATE KEY", body_lines=2)),
    (scrub.PRIVATE_KEY, _private_key("PRIVATE KEY")),
    (scrub.PRIVATE_KEY, _private_key("ENCRYPTED PRIVATE KEY")),
    (scrub.PRIVATE_KEY, _private_key("PGP PRIVATE KEY BLOCK")),
    (scrub.PRIVATE_KEY, _private_key("RSA PRIVATE KEY").rsplit("\n", 1)[0]),
    # JWTs
    (scrub.JWT, _jwt('{"sub":"1234567890","name":"CI bot","iat":1716000000}')),
    (scrub.JWT, _jwt('{"iss":"https://issuer.invalid","aud":"memory-agent","exp":1900000000}')),
    # Other well-known formats
    (scrub.GITLAB_TOKEN, "gl" + "pat-" + _chars(20, _URLSAFE) + "x"),
    (scrub.NPM_TOKEN, "np" + "m_" + _chars(36)),
    (scrub.PYPI_TOKEN, "py" + "pi-AgE" + _chars(120, _URLSAFE) + "w"),
    (scrub.GOOGLE_API_KEY, "AI" + "za" + _chars(34, _URLSAFE) + "k"),
    (scrub.STRIPE_KEY, "sk" + "_live_" + _chars(24)),
    (scrub.HUGGING_FACE_TOKEN, "h" + "f_" + _chars(34, string.ascii_letters)),
    # High-entropy values assigned to credential-like names (found with their name only)
    (scrub.CREDENTIAL, _chars(24)),
    (scrub.CREDENTIAL, _chars(32, _HEX)),
    (scrub.CREDENTIAL, _chars(12) + "!" + _chars(8) + "$" + _chars(4)),
    # A password in a URL
    (scrub.URL_PASSWORD, _chars(20)),
    # Values the run masked: plain, URL-encoded, base64 alone and inside a larger base64 string
    (scrub.MASKED_VALUE, MASKED_PASSWORD),
    (scrub.MASKED_VALUE, MASKED_PASSPHRASE),
    (scrub.MASKED_VALUE, quote(MASKED_PASSWORD, safe="")),
    (scrub.MASKED_VALUE, base64.b64encode(MASKED_DEPLOY_KEY.encode()).decode()),
    (
        scrub.MASKED_VALUE,
        base64.b64encode(f"x-access-token:{MASKED_DEPLOY_KEY}".encode()).decode(),
    ),
    (
        scrub.MASKED_VALUE,
        base64.urlsafe_b64encode(f"ci:{MASKED_PASSWORD}".encode()).decode(),
    ),
]


def standalone(kind: str, secret: str) -> str:
    """Text in which ``secret`` is found on its own (with ``MASKED_VALUES`` for masked ones)."""
    if kind == scrub.CREDENTIAL:
        return f'api_key = "{secret}"'
    if kind == scrub.AWS_SECRET_ACCESS_KEY:
        return f"aws_secret_access_key = {secret}"
    if kind == scrub.URL_PASSWORD:
        return f"https://deploy:{secret}@db.internal.invalid:5432/app"
    return secret


_SHA1 = "3f786850e387550fdab836ed7e6dc881de23001b"
_SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

ORDINARY: list[str] = [
    f"- Fixed in {_SHA1}; the regression came with a94a8fe5ccb19ba61c4c0873d391e987982fbbd3.",
    "- Request ids are UUIDs such as 123e4567-e89b-12d3-a456-426614174000.",
    f"- The base image is pinned by digest: python@sha256:{_SHA256}.",
    f"- checksum: {_SHA256}",
    "- Bump langchain to 1.5.2 and langgraph to 1.2.0rc1; we support Python >= 3.11.",
    "- Released 2024-05-17T12:34:56Z as 3.2.1+build.20240517.",
    "- Docs live at https://docs.example.com/guide?section=tokens#rotation.",
    "- Use `MemoryMiddleware.wrap_model_call` and `_check_budget_for_oversized_memory_files()`.",
    "- ThisIsAVeryLongPascalCaseIdentifierForTheReviewServiceFactory owns retries.",
    "- The CI reads the token from `${{ secrets.GITHUB_TOKEN }}`; never hard-code it.",
    "  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "- password: <your-password-here>",
    '- api_key = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
    "- token: $DEPLOY_TOKEN_FROM_THE_ENVIRONMENT",
    "- client_secret: ********************",
    "- 'hello world' in base64 is aGVsbG8gd29ybGQ= and 'memory agent' is bWVtb3J5IGFnZW50.",
    "- secret_name: prod-database-credentials-v2",
    "- token_url: https://oauth.example.com/oauth2/token",
    "- max_tokens: 4096, tokenizer = cl100k_base",
    "- The auth module (auth/session_manager.py) owns session renewal.",
    "- author: Jane Doe <jane@example.com>",
    "- AWS documents the example key id AKIAIOSFODNN7EXAMPLE; it is not a secret.",
    "- Tests connect to postgres://postgres:postgres@localhost:5432/test_db.",
    "- Clone with git@github.com:org/repo.git and check out v2.3.4-beta.1.",
    "- ghp_ tokens are classic PATs; github_pat_ tokens are fine-grained.",
    "- token = os.environ['GITHUB_TOKEN']",
    "- password = get_password_from_vault(settings.vault_path)",
    "- Authorization: Bearer <token>",
    "- secret = settings.deploy_secret_for_production",
    "- api_key_env: OPENAI_API_KEY",
    "- JWTs start with eyJ; Anthropic keys start with sk-ant-.",
    "- Memory edits that held a secret show up as [REDACTED GitHub token] in old notes.",
    "- The secret is stored in the vault, not here.",
]
