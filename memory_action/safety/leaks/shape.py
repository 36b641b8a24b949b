"""Judging a value found in a credential position: a secret, or a placeholder, a name, a word?

These judgements are only ever made on a VALUE that a name or a position has already marked as a
credential (``password: ...``, ``-u user:...``, ``Authorization: Bearer ...``): on free text they
would flag commit SHAs and UUIDs. Two strengths: a password may be short and simple
(``hunter2``), a token or key must look random.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from urllib.parse import unquote

MIN_PASSWORD_LENGTH = 6
MIN_TOKEN_LENGTH = 8
MIN_TOKEN_ENTROPY = 3.5  # bits per character, for long values
MIN_HEX_TOKEN_ENTROPY = 2.8  # hex carries at most 4 bits per character

_PLACEHOLDER = re.compile(
    r"(?i)xxx|\*\*\*|\.\.\.|…|<[^>]*>|\$\{|\{\{|\}\}|#\{|%\(|\$\(|^\$|^%|%$|^@|your[_-]?|example"
    r"|placeholder|changeme|change[_-]me|redacted|dummy|sample|insert[_-]|replace[_-]?me"
    r"|^secrets?\.|env\.|vars\.|^process\.|^os\.|^settings\.|^config\.|^self\.|^this\.|fake"
)
# Values that say what a field holds rather than hold it (type names, flags, defaults).
_NOT_A_VALUE = frozenset(
    str.split(
        "none null nil true false yes no on off undefined required optional string str bytes int"
        " integer bool boolean text number any object password passwd secret token key auth hidden"
        " masked empty unset todo tbd n/a na default admin root guest test postgres mysql user"
        " username letmein secretstr securestring char varchar"
    )
)
# Words, names and paths: snake_case, kebab-case, CONSTANT_CASE, Capitalised, a:urn, a/path.
_WORDS = re.compile(
    r"_*(?:[A-Za-z][a-z]*[0-9]?(?:[-_.:/]+[A-Za-z0-9][a-z0-9]*)*|[A-Z]+(?:[-_.:/]+[A-Z0-9]+)*)_*"
)
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_MIN_CAMEL_PART = 3.0  # average characters per part: "SSHPrivateKeyTypes" is 4.5, random ~2
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_NUMBERISH = re.compile(r"[0-9.,:/+_ -]+[a-z]{0,3}")  # 4096, 1.2.3, 2026-07-01, 30s, 10m
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_LOWER_WORD = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+")
# raw_password, db-pass, DEPLOY_TOKEN_FROM_ENV, DbPassword: a name made of words, no digits.
# Apple's app-specific passwords: four groups of four lower-case letters (abcd-efgh-ijkl-mnop).
_APPLE_APP_PASSWORD = re.compile(r"[a-z]{4}(?:-[a-z]{4}){3}")
_NAME_OF_WORDS = re.compile(r"_*[A-Za-z]+(?:[-_.]+[A-Za-z]+)+_*|(?:[A-Z][a-z]+){2,}")
# A git SHA (7 to 40) or a SHA-256 digest, as commits and digests are named in prose.
_GIT_OR_DIGEST = re.compile(r"[0-9a-f]{7,40}|[0-9a-f]{64}")
# Command-line flags: --no-interaction, --cov=src, -n; a flag's value is judged on its own.
_FLAG = re.compile(r"--[A-Za-z][\w.-]*(?:=\S*)?|-[A-Za-z][A-Za-z-]*")
# A YAML tag in the value's place: Ansible's !vault, CloudFormation's !Ref and !GetAtt.
_YAML_TAG = re.compile(r"![A-Za-z][\w.:-]*")
# A digest that names its algorithm: sha512-<base64> (Subresource Integrity), sha256:<hex>.
_NAMED_DIGEST = re.compile(r"(?i)sha(?:1|224|256|384|512)[-:][A-Za-z0-9+/=_-]{20,200}")
# A path segment made of words: a name, a kebab/snake name, a file name with extensions.
# A part of a key path: words (lower-case, Capitalised or upper-case), numbers, a version, ``~``
# and hex for a hashed part; not the mixed case of random base64 (``wJalrXUtnFEMI``).
_KEY_WORD = r"(?:[A-Z]?[a-z0-9]+|[A-Z0-9]+)"
_KEY_PART = re.compile(rf"~?{_KEY_WORD}(?:[-_.]{_KEY_WORD})*")
_PATH_PART = re.compile(r"[A-Za-z][A-Za-z]*[0-9]{0,2}(?:[-_.]+[A-Za-z0-9][A-Za-z]*[0-9]{0,2})*")


# Illustrative values, the kind documentation and "bad example" blocks show: runs along the
# alphabet, the digits or a keyboard row (``abc123xyz789``, ``qwerty123``, ``123456``), and the
# credential word itself in leetspeak or with digits (``s3cr3t``, ``p@ssw0rd!``, ``secret123``).
# Kept this narrow on purpose: ``hunter2`` or ``Tr0ub4dor`` in a password position still counts.
_SEQUENCES = (
    "abcdefghijklmnopqrstuvwxyz",
    "zyxwvutsrqponmlkjihgfedcba",
    "01234567890",
    "09876543210",
    "qwertyuiop",
    "asdfghjkl",
    "zxcvbnm",
)
_MIN_RUN = 3
_LEET = str.maketrans("0134579@$", "oieastgas")
_CREDENTIAL_WORDS = frozenset(
    str.split("password passwd pass pwd passphrase passcode secret secretkey token key apikey")
)
_FILLER_PREFIXES = ("my", "super", "top", "the", "some")
_EDGE_DIGITS_AND_MARKS = re.compile(r"^[\W\d_]+|[\W\d_]+$")
# A type in a value's place after a ``:``: GraphQL ``String!``, Kotlin and Swift ``String?``,
# ``Token[]``; a word (with a bit width) and the marks, never a digit elsewhere (``Hunter2!``).
_TYPE_ANNOTATION = re.compile(r"[A-Za-z_][A-Za-z_.]*(?:8|16|32|64|128)?(?:\[\]|[!?])+")


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for an empty string)."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def is_placeholder(value: str) -> bool:
    """``xxxx``, ``<token>``, ``${{ secrets.X }}``, ``$VAR``, ``your-key-here``, ``changeme``..."""
    return (
        len(set(value)) <= 3
        or value.lower() in _NOT_A_VALUE
        or _PLACEHOLDER.search(value) is not None
        or is_illustrative(value)
    )


def is_illustrative(value: str) -> bool:
    """An example value: keyboard or alphabet runs, or the credential word dressed up."""
    return _is_runs(value.lower().rstrip("!.?")) or _is_credential_word(value)


def _is_runs(value: str) -> bool:
    """Whether ``value`` is made only of runs of at least three along ``_SEQUENCES``."""
    position = 0
    while position < len(value):
        run = max(_run_at(value, position, sequence) for sequence in _SEQUENCES)
        if run < _MIN_RUN:
            return False
        position += run
    return bool(value)


def _run_at(value: str, position: int, sequence: str) -> int:
    start = sequence.find(value[position])
    if start < 0:
        return 0
    length = 0
    while (
        position + length < len(value)
        and start + length < len(sequence)
        and value[position + length] == sequence[start + length]
    ):
        length += 1
    return length


def _is_credential_word(value: str) -> bool:
    """``s3cr3t``, ``P@ssw0rd!``, ``secret123``, ``mysecret_1``, ``t0k3n``: the word itself.

    Whole only: ``p4ss-W0rd-7`` is made of words with dashes between, as real passwords are.
    """
    core = _EDGE_DIGITS_AND_MARKS.sub("", value.lower()).translate(_LEET)
    for prefix in _FILLER_PREFIXES:
        if core.startswith(prefix) and core[len(prefix) :] in _CREDENTIAL_WORDS:
            return True
    return core in _CREDENTIAL_WORDS


def is_type_annotation(value: str) -> bool:
    """A type after ``name:`` (``String!``, ``String?``, ``Secret[]``), not a value."""
    return _TYPE_ANNOTATION.fullmatch(value) is not None


def is_digest(value: str) -> bool:
    """A commit SHA or a hex digest (7 to 64 lower-case hex characters, with a digit)."""
    return _GIT_OR_DIGEST.fullmatch(value) is not None and any(c.isdigit() for c in value)


def looks_like_password(value: str) -> bool:
    """A value in a password position: short and simple is fine, a word or a name is not."""
    if len(value) < MIN_PASSWORD_LENGTH or _is_reference(value):
        return False
    if _APPLE_APP_PASSWORD.fullmatch(value) is not None:
        return True
    if _LOWER_WORD.fullmatch(value) is not None:  # "letmein", "Password", "STAGING"
        return False
    return not (
        _NAME_OF_WORDS.fullmatch(value) is not None
        or _is_dotted_name(value)
        or (value.isalpha() and _is_camel_case(value))  # passwordPolicy, OAuthCallbackHandler
        or _is_path(value)  # tests/fixtures/tokens.json, .github/copilot-instructions.md
    )


def looks_like_token(value: str) -> bool:
    """A value in a token or key position: random-looking, not a word, a name, a number."""
    if len(value) < MIN_TOKEN_LENGTH or _is_reference(value) or _is_identifier(value):
        return False
    if _is_key_path(value):
        return False
    if _NUMBERISH.fullmatch(value) is not None or _VERSION.fullmatch(value) is not None:
        return False
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    if classes < 2 and not (len(value) >= 16 and _HEX.fullmatch(value)):
        return False  # one case of letters only, or digits only
    return shannon_entropy(value) >= _entropy_floor(value)


def _is_reference(value: str) -> bool:
    """A placeholder, a path, a URL, a flag, a YAML tag, a hash's name for itself, or text with
    spaces: something other than the value."""
    return (
        is_placeholder(value)
        or any(c.isspace() for c in value)
        or "://" in value
        or value.startswith(("/", "./", "../", "~/", "\\"))
        or re.match(r"[A-Za-z]:\\", value) is not None
        or _FLAG.fullmatch(value) is not None
        or _YAML_TAG.fullmatch(value) is not None
        or _NAMED_DIGEST.fullmatch(value) is not None
    )


def _is_key_path(value: str) -> bool:
    """A key made of path parts, as caches and stores name entries by: ``memory-agent/v1/
    agent/branch/feature%2Flogin/committed/1001-1-Review_PR-0a1b2c3d``. Every part but the last
    (an entry's own id) is made of words once percent-decoded; random base64 (AWS's secret
    keys hold ``/``) mixes cases inside its parts."""
    parts = unquote(value).split("/")
    return len(parts) >= 3 and all(_KEY_PART.fullmatch(part) for part in parts[:-1])


def _is_path(value: str) -> bool:
    """A relative path of names: ``src/auth/token.ts``, ``.agent-memory/AGENTS.md``."""
    if "/" not in value and not value.startswith("."):
        return False
    parts = value.lstrip(".").split("/")
    return all(part and _PATH_PART.fullmatch(part) is not None for part in parts)


def _is_identifier(value: str) -> bool:
    """A variable, a dotted attribute, a CamelCase type: code, not a literal.

    Not a name of words with a random part: ``key-3ax6xnjp29jd6fds4gc373sgvjxteol0`` is a prefix
    and a token in a lower-case alphabet.
    """
    if _WORDS.fullmatch(value) is not None:
        return not any(_looks_random_part(part) for part in re.split(r"[-_.:/]+", value))
    return _is_dotted_name(value) or _is_camel_case(value)


def _is_dotted_name(value: str) -> bool:
    """``settings.deploy_secret``, but not Vault's legacy ``s.`` + 24 random characters."""
    return _DOTTED_NAME.fullmatch(value) is not None and not any(
        _looks_random_part(part) for part in value.split(".")
    )


def _looks_random_part(part: str) -> bool:
    digits = sum(c.isdigit() for c in part)
    return len(part) >= 10 and (digits >= 3 or (digits > 0 and not part.islower()))


def _is_camel_case(value: str) -> bool:
    """A name like ``IAmSensitiveBytes`` or ``Ed25519PrivateKey``: long parts that are words.

    Random letters and digits make many short parts, and lower-case runs without vowels.
    """
    name = value.strip("_")
    if not name.isalnum() or not name.isascii() or name.islower() or name.isupper():
        return False
    parts = _CAMEL_PART.findall(name)
    if len(name) < _MIN_CAMEL_PART * len(parts):
        return False
    # Random letters make runs without vowels; names have short ones too (Ttl, Cfg, Msg).
    words = (part for part in parts if len(part) >= 4 and part.isalpha() and not part.isupper())
    return all(_VOWEL.search(word) for word in words)


def _entropy_floor(value: str) -> float:
    """``MIN_TOKEN_ENTROPY``, relaxed where a random value cannot reach it.

    A value of n characters has at most log2(n) bits per character, so a random 16-character
    token is often just under 3.5: 80% of that ceiling is enough. Hex has at most 4 bits per
    character and random hex of 16-40 characters mostly lands between 3.0 and 3.7.
    """
    floor = min(MIN_TOKEN_ENTROPY, 0.8 * math.log2(len(value)))
    if _HEX.fullmatch(value.replace("-", "")) is not None:  # hex, UUIDs
        floor = min(floor, MIN_HEX_TOKEN_ENTROPY)
    return floor
