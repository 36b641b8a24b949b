"""Which names hold a credential: ``DB_PASSWORD``, ``apiKey``, ``client-key-data``, ``sig``.

A name is split into words (``_``, ``-``, ``.``, camelCase); it holds a credential when one word
is a credential word and every word after it only says how the value is stored (``_data``,
``_base64``). So ``SECRET_KEY_BASE`` and ``client-key-data`` count, ``secret_name``,
``token_url``, ``api_key_id`` and ``max_tokens`` do not.
"""

# Kind and strength names, not secrets (S105 would flag PASSWORD = "password").
# ruff: noqa: S105
from __future__ import annotations

import re
from enum import Enum


class Strength(Enum):
    """What a value under the name must look like to be taken for a secret."""

    PASSWORD = "password"  # short and simple is fine (``hunter2``)
    TOKEN = "token"  # must look random


_PASSWORD_WORDS = frozenset(
    str.split("password passwd pwd pass passphrase passcode userpass dbpass pw")
)
_TOKEN_WORDS = frozenset(
    str.split(
        "secret token key apikey secretkey accesskey privatekey authkey accesstoken authtoken"
        " apitoken authorization auth credential credentials creds sig signature pat bearer"
        " jwt sas connectionstring connstr privatetoken"
    )
)
# Words after the credential word that only say how the value is kept.
_STORAGE_WORDS = frozenset(
    str.split("base value data string str b64 base64 hex raw plain plaintext")
)
# ``key`` after these words is not a credential key.
_NOT_CREDENTIAL_KEYS = frozenset(
    str.split(
        "public pub foreign sort partition cache idempotency row lookup i18n translation"
        " dict map composite unique index hash routing object bucket registry kid host"
        " restore matched"  # a cache's keys: actions/cache's restore-key, cache-matched-key
    )
)
# Run-together names (``PGPASSWORD``, ``MYTOKEN``) end with one of these.
_LONG_WORDS = {
    **dict.fromkeys(("password", "passwd", "passphrase"), "password"),
    **dict.fromkeys(("secret", "token", "apikey", "credentials"), "token"),
}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def credential_strength(name: str) -> Strength | None:
    """How strongly a value under ``name`` must look random, or None for an ordinary name."""
    words = [word.lower() for word in _WORD.findall(name)]
    for index in range(len(words) - 1, -1, -1):
        word = words[index]
        if word in _STORAGE_WORDS:
            continue
        if word in _PASSWORD_WORDS:
            return Strength.PASSWORD
        if word in _TOKEN_WORDS and not _is_public_key(words, index):
            return Strength.TOKEN
        return _run_together(word)
    return None


def _run_together(word: str) -> Strength | None:
    for ending, strength in _LONG_WORDS.items():
        if word.endswith(ending):
            return Strength.PASSWORD if strength == "password" else Strength.TOKEN
    return None


def _is_public_key(words: list[str], index: int) -> bool:
    return words[index] == "key" and index > 0 and words[index - 1] in _NOT_CREDENTIAL_KEYS
