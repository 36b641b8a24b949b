"""Layer (b): a value in a credential position, judged by its shape only there.

Positions: an assignment to a credential-like name in any syntax (``=``, ``:``, ``:=``, ``=>``,
``export``, YAML/JSON/TOML keys, ``NAME value`` in ``.netrc``, ``--password x`` and
``--token=x`` flags, ``"name", "value"`` as in PHP's ``define``, ``<password>x</password>``),
``Authorization:`` headers, URL userinfo, ``curl -u user:pass``, ``mysql -pX``, ``sshpass -p X``,
``openssl -passin pass:X``, and prose (``the password is X``). Connection strings
(``Password=x;``, ``AccountKey=x;``) are assignments too.

The scan is anchored on credential words, and every step from an anchor looks at a bounded
number of characters, so the layer stays linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_action.safety.leaks.candidate import CREDENTIAL, PRIORITY, URL_PASSWORD, Candidate
from memory_action.safety.leaks.names import Strength, credential_strength
from memory_action.safety.leaks.shape import (
    is_digest,
    is_type_annotation,
    looks_like_password,
    looks_like_token,
)

_MAX_NAME = 80
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_HINT = re.compile(r"(?i)pass|pwd|pw|secret|token|key|auth|cred|sig|sas|pat|bearer|jwt|conn")
_OPERATOR = re.compile(r"""\\?["'`]?\]?[ \t]{0,8}(?::=|=>|=|:(?!:))[ \t]{0,8}""")
_QUOTED_NAME_COMMA = re.compile(r"""["'][ \t]{0,8},[ \t]{0,8}""")
_PROSE = re.compile(r"[ \t]+(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+)?")
_SPACE = re.compile(r"[ \t]+")
# Only the keyword itself takes a value after a space (``.netrc``'s "password value"): "pass",
# "Pass" and "1Password" are a verb and a brand in prose.
_SPACED_NAMES = frozenset(("password", "passwd", "passphrase"))
_SHELL_DEFAULT = re.compile(r":?[-=](?P<value>[^}\s\"'`$]{1,512})\}")
_MAX_WORD = 40
_VALUE = re.compile(
    r"""(?i:(?:bearer|basic|token|ssws|apikey|api-key|digest)[ \t]+)?(?:[bfruBFRU]{1,2}(?=["']))?"""
    r"""(?:"(?P<dq>[^"\n]{1,512})"|'(?P<sq>[^'\n]{1,512})'|`(?P<bq>[^`\n]{1,512})`"""
    r"""|\\"(?P<eq>[^"\\\n]{1,512})\\"|(?P<bare>(?:[^\s"'`,;&<>()\[\]{}|\\=]|&(?![A-Za-z_][\w.-]{0,40}=)){1,512}={0,2}))"""
)
_VALUE_GROUPS = ("dq", "sq", "bq", "eq", "bare")


def context_candidates(text: str) -> Iterator[Candidate]:
    yield from _assignment_candidates(text)
    yield from _xml_candidates(text)
    yield from _userinfo_candidates(text)
    yield from _command_candidates(text)
    yield from _bearer_candidates(text)
    yield from _app_settings_candidates(text)
    yield from _pgpass_candidates(text)
    yield from _function_key_candidates(text)
    yield from _cookie_candidates(text)


# A value that is itself a credential's name, letters only: ``key="ida:ClientSecret"`` in
# appSettings, ``secretRef: DbPassword``. It says where the secret is, not what it is.
_NAME_ONLY = re.compile(r"[A-Za-z][A-Za-z:_.-]*")


def _judge(value: str, strength: Strength) -> bool:
    if _NAME_ONLY.fullmatch(value) is not None and credential_strength(value) is not None:
        return False
    if strength is Strength.PASSWORD:
        return looks_like_password(value)
    return looks_like_token(value)


def _found(start: int, end: int, kind: str = CREDENTIAL) -> Candidate:
    return Candidate(start=start, end=end, priority=PRIORITY[kind], kind=kind)


# --- assignments to credential-like names -------------------------------------------------------


def _assignment_candidates(text: str) -> Iterator[Candidate]:
    seen: set[int] = set()
    skip_until = 0  # the end of an identifier too long to be a name: its hints are skipped
    for hint in _HINT.finditer(text):
        if hint.start() < skip_until:
            continue
        span = _name_around(text, hint.start(), hint.end())
        if span is None:
            skip_until = _identifier_end(text, hint.end())
            continue
        if span[1] in seen:
            continue
        seen.add(span[1])
        name_start, name_end = span
        strength = _strength_at(text, name_start, name_end)
        if strength is None:
            continue
        found = _value_after(text, name_start, name_end, strength)
        if found is None:
            continue
        (start, end), in_prose = found
        value = text[start:end]
        if in_prose and is_digest(value):  # "the commit that rotated the token is <sha>"
            continue
        if _annotated(text[name_end:start]) and is_type_annotation(value):
            continue  # $password: String!, val token: String?
        if in_prose and _previous_word(text, name_start).lower() in _SPEAKERS:
            if _WORD_AND_DIGITS.fullmatch(value) is not None:
                continue  # "my password is pumpkin88": a line of dialogue
            strength = Strength.TOKEN  # "my password is ...": random to count
        if _judge(value, strength):
            yield _found(start, end)


# "my password is X" is someone speaking (a dialogue, a support example): X counts only when it
# looks random, as a token must; "the password is X" is a note and keeps the password strength.
_SPEAKERS = frozenset(("my",))
_WORD_AND_DIGITS = re.compile(r"[A-Za-z][a-z]+[0-9]{1,4}[!?.]?")


def _annotated(separator: str) -> bool:
    """Whether the text between a name and its value is a ``:`` (a type's place), not ``=``."""
    return ":" in separator and "=" not in separator


def _strength_at(text: str, name_start: int, name_end: int) -> Strength | None:
    """How a value after the name at ``text[name_start:name_end]`` is judged, if it is a name.

    Not a name: a part of an ARN or URN (``arn:aws:secretsmanager:...:secret:prod/app``). The
    word before a name in prose counts too: the ``public key is ...``, ``sort key: ...``.
    """
    name = text[name_start:name_end]
    if text[name_start - 1 : name_start] == text[name_end : name_end + 1] == ":":
        return None
    strength = credential_strength(name)
    previous = _previous_word(text, name_start)
    if strength is not None and previous:
        return credential_strength(f"{previous}_{name}")
    return strength


def _previous_word(text: str, position: int) -> str:
    """The word one blank before ``position`` (past an opening quote), or ``""``."""
    position -= 1 if position > 0 and text[position - 1] in "\"'`" else 0
    if position < 2 or text[position - 1] not in " \t":
        return ""
    end = start = position - 1
    while start > 0 and end - start < _MAX_WORD and text[start - 1].isalpha():
        start -= 1
    boundary = start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_.-")
    return text[start:end] if end - start >= 2 and boundary else ""


def _name_around(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The identifier holding ``text[start:end]``, without leading dashes or trailing dots."""
    low = start
    while low > 0 and text[low - 1] in _NAME_CHARS:
        low -= 1
        if start - low > _MAX_NAME:
            return None
    high = end
    while high < len(text) and text[high] in _NAME_CHARS:
        high += 1
        if high - end > _MAX_NAME:
            return None
    while high > end and text[high - 1] in ".-":
        high -= 1
    return low, high


def _identifier_end(text: str, position: int) -> int:
    while position < len(text) and text[position] in _NAME_CHARS:
        position += 1
    return position


def _value_after(
    text: str, name_start: int, name_end: int, strength: Strength
) -> tuple[tuple[int, int], bool] | None:
    """Where the value assigned to the name ending at ``name_end`` is, if it is assigned one,
    and whether it is assigned in prose (``the token is X``)."""
    if text.startswith("${", name_start - 2):
        span = _shell_default(text, name_end)
        return None if span is None else (span, False)
    separators = [_OPERATOR, _PROSE]
    if name_start > 0 and text[name_start - 1] in "\"'":
        separators.append(_QUOTED_NAME_COMMA)  # define('DB_PASSWORD', 'value')
    name = text[name_start:name_end]
    if name.startswith("-") or (strength is Strength.PASSWORD and name in _SPACED_NAMES):
        separators.append(_SPACE)  # --token value, .netrc's "password value"
    match = next((m for s in separators if (m := s.match(text, name_end)) is not None), None)
    if match is None:
        return None
    span = _value_span(text, match.end())
    return None if span is None else (span, match.re is _PROSE)


def _shell_default(text: str, name_end: int) -> tuple[int, int] | None:
    """The default in ``${NAME:-default}`` / ``${NAME:=default}``: a value, hard-coded.

    ``${NAME:?message}`` and ``${NAME:+alternate}`` hold no value of the name, and the ``:`` of
    ``:-`` is no assignment.
    """
    match = _SHELL_DEFAULT.match(text, name_end)
    return None if match is None else match.span("value")


def _value_span(text: str, position: int) -> tuple[int, int] | None:
    match = _VALUE.match(text, position)
    if match is None:
        return None
    group = next(name for name in _VALUE_GROUPS if match.group(name) is not None)
    start, end = match.span(group)
    if group == "bare":
        if end < len(text) and text[end] in "([":  # a call or a subscript: code, not a value
            return None
        while end > start and text[end - 1] in ".:":  # a sentence's full stop
            end -= 1
    return (start, end) if end > start else None


# --- a bearer token named in prose or a header: "the bearer token X", "Bearer X" -----------------

_BEARER = re.compile(r"(?i)(?<![\w-])bearer[ \t]+(?:token[ \t]+)?")


def _bearer_candidates(text: str) -> Iterator[Candidate]:
    for match in _BEARER.finditer(text):
        span = _value_span(text, match.end())
        if span is not None and looks_like_token(text[span[0] : span[1]]):
            yield _found(*span)


# --- <password>value</password> -----------------------------------------------------------------

_XML = re.compile(r"<(?P<name>[A-Za-z][\w.:-]{0,60})>(?P<value>[^<\s]{1,512})</(?P=name)>")


def _xml_candidates(text: str) -> Iterator[Candidate]:
    if "</" not in text:
        return
    for match in _XML.finditer(text):
        strength = credential_strength(match.group("name"))
        if strength is not None and _judge(match.group("value"), strength):
            yield _found(*match.span("value"))


# --- scheme://user:password@host ----------------------------------------------------------------

_USERINFO = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{0,20}://(?P<user>[^\s:/@\"'<>]{0,128}):(?P<password>[^\s/@\"'<>]"
    r"{1,256})@(?=[A-Za-z0-9\[])"
)


# A token as the whole userinfo, no password: https://<token>@github.com/acme/api.git. The
# user must look random (a token's test), so git@, deploy@ and first.last@ stay names.
_USER_TOKEN = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{0,20}://(?P<user>[^\s:/@\"'<>]{8,256})@[A-Za-z0-9\[]"
)
# Sentry's DSN carries a public key as its user name: the docs call it safe to expose.
_PUBLIC_KEY_HOSTS = ("sentry.io", "sentry.")


def _userinfo_candidates(text: str) -> Iterator[Candidate]:
    if "://" not in text:
        return
    for match in _USERINFO.finditer(text):
        password = match.group("password")
        if password != match.group("user") and looks_like_password(password):
            yield _found(*match.span("password"), kind=URL_PASSWORD)
    for match in _USER_TOKEN.finditer(text):
        host = text[match.end() - 1 : match.end() + 80]
        if any(name in host.split("/", 1)[0] for name in _PUBLIC_KEY_HOSTS):
            continue
        if looks_like_token(match.group("user")):
            yield _found(*match.span("user"))


# --- command lines: curl -u, mysql -p, sshpass -p, login -p, openssl pass: ----------------------

_USER_FLAG = re.compile(
    r"(?<![\w-])(?:-u|--user|--basic-auth)(?:[ \t]+|=)[\"']?(?P<user>[^\s\"':]{0,128}):"
    r"(?P<password>[^\s\"']{1,256})"
)
_ATTACHED_P = re.compile(r"(?<![\w-])-p(?P<password>[^\s\"'\-][^\s\"']{3,127})")
_SPACED_P = re.compile(r"(?<![\w-])-p[ \t]+[\"']?(?P<password>[^\s\"']{1,256})")
_OPENSSL_PASS = re.compile(r"-pass(?:in|out)?[ \t]+pass:(?P<password>[^\s\"']{1,256})")
_LOOK_BACK = 200  # how far back on the command line the program's name may be


def _command_candidates(text: str) -> Iterator[Candidate]:
    for match in _USER_FLAG.finditer(text):
        password = match.group("password")
        if password != match.group("user") and looks_like_password(password):
            yield _found(*match.span("password"))
    for pattern, programs in (
        (_ATTACHED_P, ("mysql", "mariadb")),
        (_SPACED_P, ("sshpass", "login", "mysql", "mariadb")),
    ):
        if "-p" not in text:
            break
        for match in pattern.finditer(text):
            if _after_program(text, match.start(), programs) and looks_like_password(
                match.group("password")
            ):
                yield _found(*match.span("password"))
    if "pass:" in text:
        for match in _OPENSSL_PASS.finditer(text):
            if looks_like_password(match.group("password")):
                yield _found(*match.span("password"))


def _after_program(text: str, position: int, programs: tuple[str, ...]) -> bool:
    """Whether one of ``programs`` is named earlier on the same command line (close by)."""
    line_start = text.rfind("\n", max(0, position - _LOOK_BACK), position) + 1
    window = text[max(line_start, position - _LOOK_BACK) : position]
    return any(program in window for program in programs)


# --- .NET appSettings: <add key="ClientSecret" value="..." /> -----------------------------------

_APP_SETTING = re.compile(
    r"""<add[ \t\n]{1,8}key[ \t]{0,4}=[ \t]{0,4}"""
    r"""(?:"(?P<dname>[^"<>\n]{1,80})"|'(?P<sname>[^'<>\n]{1,80})')"""
    r"""[ \t\n]{1,8}value[ \t]{0,4}=[ \t]{0,4}"""
    r"""(?:"(?P<dvalue>[^"\n]{1,512})"|'(?P<svalue>[^'\n]{1,512})')"""
)


def _app_settings_candidates(text: str) -> Iterator[Candidate]:
    if "<add" not in text:
        return
    for match in _APP_SETTING.finditer(text):
        strength = credential_strength(match.group("dname") or match.group("sname"))
        group = "dvalue" if match.group("dvalue") is not None else "svalue"
        if strength is not None and _judge(match.group(group), strength):
            yield _found(*match.span(group))


# --- .pgpass lines: hostname:port:database:username:password -------------------------------------

# PostgreSQL's password file: the first four fields may be ``*``, the port is a number, and a
# ``:`` or ``\`` inside a field is escaped with ``\``. IPv6 and MAC addresses have fields too
# short to be a password.
_PGPASS = re.compile(
    r"(?m)(?:^|[\s\"'`=>])(?P<host>[A-Za-z0-9.*_-]{1,253}):(?P<port>[0-9]{1,5}|\*):"
    r"(?P<database>[^:\s\"'`]{1,63}):(?P<user>[^:\s\"'`]{1,63}):"
    r"(?P<password>(?:\\.|[^:\s\"'`\\]){1,256})"
)


def _pgpass_candidates(text: str) -> Iterator[Candidate]:
    if text.count(":") < 4:
        return
    for match in _PGPASS.finditer(text):
        password, user = match.group("password"), match.group("user")
        # A reader's view joins a code span to the sentence's full stop: `db:5432:*:pg:pg`.
        if password.rstrip(".,;!?)") == user:
            continue
        if not _is_host(match.group("host")):
            continue  # 12:30:45:120:frame=42 is a timestamp and a counter
        if looks_like_password(password.replace("\\", "")):
            yield _found(*match.span("password"))


def _is_host(host: str) -> bool:
    """A host name (a letter in it), an IPv4 address (dots), or ``*``: not a bare number."""
    return host == "*" or "." in host or any(c.isalpha() for c in host)


# --- Azure Functions keys: https://<app>.azurewebsites.net/api/<function>?code=<key> -------------

_CODE_PARAMETER = re.compile(r"[?&]code=(?P<key>[A-Za-z0-9_/+%=-]{20,256})")
_URL_START = re.compile(r"[\s\"'`(<\[]")
_MAX_URL = 2048


def _function_key_candidates(text: str) -> Iterator[Candidate]:
    """A function key in a URL's ``code`` parameter: on an Azure host, or an ``/api/`` path
    with a base64 key's padding (``==``), since an OAuth redirect's ``?code=`` is no key."""
    if "code=" not in text:
        return
    scanned = url_start = 0  # the URL's start moves forward only: the scan stays linear
    for match in _CODE_PARAMETER.finditer(text):
        for boundary in _URL_START.finditer(text, scanned, match.start()):
            url_start = boundary.end()
        scanned = match.start()
        url = text[max(url_start, match.start() - _MAX_URL) : match.start()]
        key = match.group("key")
        padded = key.endswith("==") or key.upper().endswith("%3D%3D")
        on_azure = ".azurewebsites.net/" in url
        if (on_azure or ("/api/" in url and padded)) and looks_like_token(_unpadded(key)):
            yield _found(*match.span("key"))


def _unpadded(key: str) -> str:
    while key.upper().endswith("%3D"):
        key = key[:-3]
    return key.rstrip("=")


# --- cookies sent by hand: curl -b '_oauth2_proxy=...', --cookie, a Cookie: header --------------

_COOKIE_FLAG = re.compile(
    r"""[ \t](?:-b|--cookie)(?:[ \t]{1,8}|=)(?:"(?P<dq>[^"\n]{1,4096})"|'(?P<sq>[^'\n]{1,4096})'"""
    r"""|(?P<bare>[^\s"']{1,4096}))"""
)
_COOKIE_HEADER = re.compile(r"(?i)\bcookie:[ \t]{0,8}(?P<bare>[^\n\"'`]{1,4096})")
_COOKIE_GROUPS = ("dq", "sq", "bare")
# oauth2-proxy's session cookie (split into _0, _1... when large); others by name.
_SESSION_COOKIE = re.compile(r"(?i)_oauth2_proxy|session|sess|sid")


def _cookie_candidates(text: str) -> Iterator[Candidate]:
    if "ookie" not in text and " -b" not in text:
        return
    for pattern in (_COOKIE_FLAG, _COOKIE_HEADER):
        for match in pattern.finditer(text):
            group = next(name for name in _COOKIE_GROUPS if match.groupdict().get(name))
            yield from _session_cookies(text, *match.span(group))


def _session_cookies(text: str, start: int, end: int) -> Iterator[Candidate]:
    """The values of session cookies in ``name=value; name=value`` at ``text[start:end]``."""
    position = start
    for pair in text[start:end].split(";"):
        name, equals, rest = pair.partition("=")
        value = rest.split(maxsplit=1)[0] if rest.strip() else ""
        value_start = position + len(name) + len(equals) + len(rest) - len(rest.lstrip())
        position += len(pair) + 1
        name = name.strip()
        if not value or not _is_session_cookie(name):
            continue
        if looks_like_token(value):
            yield _found(value_start, value_start + len(value))


def _is_session_cookie(name: str) -> bool:
    return _SESSION_COOKIE.search(name) is not None or credential_strength(name) is not None
