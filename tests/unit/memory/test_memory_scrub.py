"""Secrets never reach memory: what ``scrub`` finds and redacts, what it leaves alone, and the
edit tools and middleware refusing (and recording) edits that would store one."""

from __future__ import annotations

import base64
import itertools
import random
import string
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from memory_action.memory.middleware import MemoryMiddleware
from memory_action.memory.sources import MemoryFiles
from memory_action.memory.tools import make_memory_tools
from memory_action.run.settings import Settings
from memory_action.safety import scrub
from memory_action.safety.scrub import (
    RefusalLog,
    SecretFinding,
    describe,
    find_secrets,
    masked_forms,
    redact,
    shannon_entropy,
)
from tests.fakes.scripted_model import ScriptedChatModel, tool_call
from tests.fakes.secrets_corpus import MASKED_VALUES, PLANTED, Planted

WINDOW = 8  # no run of this many characters of a secret may survive redaction
MASKED_PASSWORD, MASKED_DEPLOY_KEY = MASKED_VALUES[0], MASKED_VALUES[1]


def fake(n: int, alphabet: str = string.ascii_letters + string.digits, tag: str = "") -> str:
    """A fake value that is the same on every run, whichever tests are selected."""
    rng = random.Random(f"{tag}/{n}/{alphabet}")  # noqa: S311 - fake values
    return "".join(rng.choice(alphabet) for _ in range(n))


def assert_gone(redacted: str, form: str) -> None:
    """No run of WINDOW characters of ``form`` is left in ``redacted``."""
    for line in form.splitlines() or [form]:
        for i in range(max(1, len(line) - WINDOW + 1)):
            window = line[i : i + WINDOW]
            assert len(window) < WINDOW or window not in redacted, f"left: {window!r}"


# --- the corpus in context (each line of it alone: tests/unit/memory/test_secrets_corpus.py) ---


def planted_id(planted: Planted) -> str:
    return planted.family.replace(" ", "_")


def assert_all_gone(redacted: str, planted: Planted, text: str) -> None:
    """No run of WINDOW characters of its secrets is left, beyond what ``text`` holds elsewhere."""
    outside = text  # the text around the secrets, where a window may occur anyway ("access_t")
    for other in PLANTED:
        for value in other.secrets:
            outside = outside.replace(value, "\0")
    for secret in planted.secrets:
        for line in secret.splitlines() or [secret]:
            for i in range(max(1, len(line) - WINDOW + 1)):
                window = line[i : i + WINDOW]
                if len(window) == WINDOW:
                    assert redacted.count(window) <= outside.count(window), f"left: {window!r}"


CONTEXTS: dict[str, Callable[[str], str]] = {
    # name -> a planted text -> a memory text holding it
    "prose": lambda text: (
        f"Lesson from PR #12: deploys failed until we dropped this:\n{text}\nKeep this in mind.\n"
    ),
    "code-fence": lambda text: f"Example:\n\n```\nclient = make_client()\n{text}\n```\n",
    "quote": lambda text: "\n".join(f"> {line}" for line in text.splitlines()) + "\n",
    "list": lambda text: (
        "# Notes\n\n- one\n" + "".join(f"  {line}\n" for line in text.splitlines())
    ),
}
IN_CONTEXT = [
    pytest.param(context, planted, id=f"{context}-{planted_id(planted)}")
    for context in CONTEXTS
    for planted in PLANTED
]


@pytest.mark.parametrize(("context", "planted"), IN_CONTEXT)
def test_planted_secrets_are_redacted_in_every_context(context: str, planted: Planted) -> None:
    text = CONTEXTS[context](planted.text)

    redacted, findings = redact(text, MASKED_VALUES)

    assert findings, f"nothing found in {context}"
    assert_all_gone(redacted, planted, text)
    assert "[REDACTED " in redacted
    assert find_secrets(redacted, MASKED_VALUES) == []


def test_the_whole_corpus_in_one_memory_file_is_redacted() -> None:
    text = "\n".join(f"## Note {i}\n\n{p.text}\n" for i, p in enumerate(PLANTED))

    redacted, findings = redact(text, MASKED_VALUES)

    assert len(findings) >= len(PLANTED)
    for planted in PLANTED:
        assert_all_gone(redacted, planted, text)
    assert all(f"## Note {i}\n" in redacted for i in range(len(PLANTED)))


# --- what is not a secret (the benign corpus: tests/unit/memory/test_secrets_corpus.py) -------


@pytest.mark.parametrize(
    "text",
    [
        'password = "<your-token>"',
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        'api_key: "${{ secrets.OPENAI_API_KEY }}"',
        "API_KEY=$OPENAI_API_KEY_FROM_THE_VAULT",
        "client_secret = ****************",
        'secret: "xxxxxxxxxxxxxxxxxxxxxxxx"',
        'password = "changeme-changeme-changeme"',
        "token = 'your-github-token-goes-here'",
        'api_key = "sk-...your key..."',
        'password = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"',  # long, but no entropy
        "auth = AuthenticationMiddlewareFactory",
        "password = hashlib.sha256(raw_password.encode()).hexdigest()",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"secret_name: {fake(24)}",  # a name that says where a secret is, not the secret
        f"token_file: /run/secrets/{fake(20)}",
        "api_key_id: 123e4567-e89b-12d3-a456-426614174000",
        f"image: ghcr.io/org/app@sha256:{fake(64, '0123456789abcdef')}",
        # Each of these is what one guard of the detector is for.
        "postgres://postgres:postgres@localhost:5432/test_db",  # a default, not a secret
        "postgres://app_test1:app_test1@localhost:5432/app",  # the password is the user name
        "key = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt)",  # a call
        "public_key: MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEjX3cD8eYfT2hPq7rS1ZTqU9vK4mNwXyQ",
        "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUN5RENDQWJDZ0F3SUJ",
        "MemoryMiddlewareFactoryAB.update.the_memory_block_for_the_next_call()",  # not Discord
    ],
)
def test_placeholders_references_and_names_are_not_credentials(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # "pass" as a verb: a flag, a path, a dotted name or a camelCase name after it
        "- Pass `--no-interaction` to all Artisan commands",
        "Always pass `--signoff` to git commit",
        "Pass `.agent-memory/AGENTS.md` as file_path",
        "- Pass `settings.auth.tokenUrl` to the client; pass passwordPolicy to the form.",
        'gh secret set DB_PASS --body "$DB_PASS" --repo acme/api',
        "mysql -h db -u root -p --database=app",
        # brand names ending in a credential word
        "- Secrets come from 1Password Connect in CI.",
        "kubectl get pods -n 1password --watch",
        "brew install --cask 1password 1password-cli",
        "op read op://Engineering/staging-db/password --no-newline",
        # shell defaults: the `:` of `:-` is no assignment, the default is judged alone
        '      POSTGRES_PASSWORD: "${POSTGRES_PASSWORD:-postgres}"',
        'clickhouse-client --password "${CH_PASSWORD:-clickhouse}"',
        'export API_TOKEN="${API_TOKEN:?set API_TOKEN in .env}"',
        # prose about credentials followed by an identifier
        f"- The commit that rotated the token is `{fake(40, '0123456789abcdef')}`.",
        f"- The commit that moved the key is {fake(10, '0123456789abcdef')}.",
        "- The integrity of `@octokit/auth-token` is `sha512-"
        + base64.b64encode(bytes(range(64))).decode()
        + "`.",
        f"- The public key is {fake(44)}.",
        "- The password is `validatePassword`'s job; the secret is `accessTokenTtl`'s.",
        # parts of a path or an ARN, not names
        f"- The secret ARN ends in `:secret:prod/app-{fake(6)}`.",
        "aws ssm get-parameter --name /prod/api/password --with-decryption",
        # references: a path, a digest that names its algorithm, a default of words
        "- The staging password is `.secrets/staging-db.txt`, read by `make db`.",
        "- The deploy key is SHA256:" + base64.b64encode(bytes(range(32))).decode()[:43] + ".",
        '  SESSION_SECRET: "${SESSION_SECRET:-local-dev-session-secret-2}"',
        "- `password: !vault |` blocks are Ansible Vault ciphertext, decrypted at deploy time.",
        "      MasterUserPassword: !GetAtt DatabaseSecret.SecretString",
    ],
)
def test_memory_prose_commands_and_identifiers_are_not_credentials(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f'      DB_PASSWORD: "${{DB_PASSWORD:-{fake(16)}}}"',  # a hard-coded default still counts
        f"machine api.example.com login ci password {fake(16)}",  # .netrc keeps its spaces
        f"helm repo add acme https://charts.example.com --password {fake(18)}",
        f"the staging password is {fake(20)}.",
        f"MAILGUN_API_KEY=key-{fake(32, string.ascii_lowercase + string.digits)}",
        f"SERVICE_TOKEN=live_{fake(35, '0123456789abcdef')}",  # a prefix, then a lower-case token
    ],
)
def test_values_in_credential_positions_still_count_when_they_look_random(text: str) -> None:
    assert [f.kind for f in find_secrets(text)] in (
        [scrub.CREDENTIAL],
        ["Mailgun API key"],
    )


@pytest.mark.parametrize(
    "text",
    [
        # A real short password next to the illustrative ones: not a run, not the word itself.
        "password: hunter2",
        "DB_PASSWORD=Tr0ub4dor",
        'SMTP_PASSWORD="p4ss-W0rd-7"',
        "password: Hunter2!",  # a digit: a value, not GraphQL's String!
        'api_key = "abc123xyz789Qm"',  # runs, then a random tail
        'secret: "s3cr3t-Vq8Lm2Rt"',  # the word, then a random part
        f"User: hi, my password is {fake(16)}",  # dialogue, but random
        # Look-alikes of the new rules' guards, with a secret in place.
        f"127.0.0.1:5432:app:ci:{fake(14)}",  # an IPv4 host is a host
        f"curl -H 'Cookie: sessionid={fake(32)}' https://admin.example.com/",
    ],
)
def test_real_short_passwords_and_random_values_still_count(text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == [scrub.CREDENTIAL]


@pytest.mark.parametrize(
    "text",
    [
        "  newPassword: String!",
        "val password: String? = null",
        '<add key="SmtpPassword" value="#{SmtpPassword}#" />',
        "db.example.com:5432:app:ci7x9q2mv:ci7x9q2mv",
        'password = "P@ssw0rd1"',
        "api_key: asdf1234qwer",
        'token: "mytoken99"',
        "Customer: my password is pumpkin88, why is it locked?",
        f"git clone https://{fake(8, string.ascii_lowercase)}@git.example.com/acme/api.git",
        f"SENTRY_DSN=https://{fake(32, '0123456789abcdef')}@o4504.ingest.sentry.io/4505",
        '<add key="ApiKeyHeader" value="#{ApiKeyHeader}#" />',
        "12:30:45:120:frame=42",
        f"fe80:0:0:0:{fake(4, '0123456789abcdef')}:b3ff:fe1e:8329",
        f"https://app.example.com/oauth/callback?code={fake(24)}&state=xyz",
        f"git checkout -b {fake(12)}=x",
    ],
)
def test_types_illustrative_values_and_look_alikes_are_not_credentials(text: str) -> None:
    assert find_secrets(text) == []


def test_masked_values_split_by_an_escaped_line_break_are_found() -> None:
    secret = fake(10, tag="a") + fake(10, tag="b")
    text = '{"note": "' + secret[:9] + "\\n" + secret[9:] + '"}'

    redacted, findings = redact(text, masked=[secret])

    assert [f.kind for f in findings] == [scrub.MASKED_VALUE]
    assert secret[:9] not in redacted
    assert secret[9:] not in redacted


def test_base64_of_ordinary_words_is_not_a_masked_value() -> None:
    words = ["hello world", "memory agent", "pull request review", "main"]
    text = " ".join(base64.b64encode(w.encode()).decode() for w in words)

    assert find_secrets(text, MASKED_VALUES) == []
    assert find_secrets(f"Prose mentioning {MASKED_PASSWORD[:3]} only.", MASKED_VALUES) == []


# --- masked values ------------------------------------------------------------------------------


def test_masked_values_shorter_than_four_characters_are_ignored() -> None:
    assert find_secrets("the cat sat on the mat", masked=["cat", "", "  "]) == []
    assert find_secrets("value: abcd", masked=["abcd"]) == [
        SecretFinding(kind=scrub.MASKED_VALUE, start=7, end=11)
    ]


def test_multi_line_masked_values_are_matched_line_by_line() -> None:
    value = f"first-{fake(12, tag='1')}\nsecond-{fake(12, tag='2')}"
    text = f"only the second line leaked: {value.splitlines()[1]}."

    redacted, findings = redact(text, masked=[value])

    assert [f.kind for f in findings] == [scrub.MASKED_VALUE]
    assert_gone(redacted, value.splitlines()[1])


@pytest.mark.parametrize("prefix", ["", "a", "ab", "user:", "x-access-token:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_masked_values_are_found_base64_encoded_at_any_alignment(
    prefix: str, encode: Callable[[bytes], bytes]
) -> None:
    # "+/?>" encodes to + and / (or - and _) somewhere.
    secret = fake(10, tag="a") + "+/?>" + fake(10, tag="b")
    blob = encode(f"{prefix}{secret}\n".encode()).decode()
    text = f"Authorization: Basic {blob} (from the logs)"

    redacted, findings = redact(text, masked=[secret])

    assert [f.kind for f in findings] == [scrub.MASKED_VALUE]
    assert text[findings[0].start : findings[0].end] == blob, "the whole encoded string goes"
    assert blob not in redacted


def test_masked_values_are_found_url_encoded_in_either_hex_case() -> None:
    secret = "p@ss/w0rd with spaces&more"
    upper = quote(secret, safe="")
    lower = upper.replace("%2F", "%2f").replace("%40", "%40").replace("%26", "%26")
    plus = "p%40ss%2Fw0rd+with+spaces%26more"

    for form in (upper, lower, plus):
        redacted, findings = redact(f"url: https://h.example/?q={form}&x=1", masked=[secret])
        assert [f.kind for f in findings] == [scrub.MASKED_VALUE], form
        assert form not in redacted


def test_masked_forms_lists_plain_encoded_and_base64_cores() -> None:
    plain, cores = masked_forms("a b/c+d=e?f")

    assert plain[0] == "a b/c+d=e?f"
    assert "a%20b%2Fc%2Bd%3De%3Ff" in plain
    assert "a+b%2Fc%2Bd%3De%3Ff" in plain
    assert "a%20b%2fc%2bd%3de%3ff" in plain
    assert len(cores) >= 3
    assert all(len(core) >= 8 for core in cores)


def test_overlapping_masked_occurrences_are_covered_whole() -> None:
    assert find_secrets("xx abababab yy", masked=["abab"]) == [
        SecretFinding(kind=scrub.MASKED_VALUE, start=3, end=11)
    ]


# --- shapes, merging, describe ------------------------------------------------------------------


def test_overlapping_findings_merge_under_the_most_specific_name() -> None:
    token = "ghp_" + fake(36)
    text = f'deploy_token = "{token}" and https://bot:{token}@github.com/o/r'

    findings = find_secrets(text, masked=[token])

    assert [f.kind for f in findings] == ["GitHub token", "GitHub token"]
    assert [text[f.start : f.end] for f in findings] == [token, token]


def test_findings_are_sorted_and_do_not_overlap() -> None:
    text = "\n".join(planted.text for planted in reversed(PLANTED[:40]))

    findings = find_secrets(text)

    assert findings == sorted(findings, key=lambda f: f.start)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


def test_a_private_key_without_end_is_redacted_to_the_end_of_text() -> None:
    text = "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + fake(64) + "\nmore text"

    assert redact(text) == (
        "key:\n[REDACTED private key]",
        [SecretFinding(kind=scrub.PRIVATE_KEY, start=5, end=len(text))],
    )


def test_two_private_keys_are_two_findings_and_text_between_stays() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\n" + fake(40) + "\n-----END EC PRIVATE KEY-----"

    redacted, findings = redact(f"{block}\nbetween\n{block}")

    assert redacted == "[REDACTED private key]\nbetween\n[REDACTED private key]"
    assert len(findings) == 2


@pytest.mark.parametrize(
    ("snippet", "kind"),
    [
        ("Authorization: Bearer " + fake(40), scrub.CREDENTIAL),
        ('"dbPassword": "' + fake(20) + '"', scrub.CREDENTIAL),
        ("X-Api-Key: " + fake(32), scrub.CREDENTIAL),
        ('token = "Xk9mQ2pL7w"', scrub.CREDENTIAL),  # random and short is still a token
        ("the staging password is " + fake(20) + ".", scrub.CREDENTIAL),
        ("SecretAccessKey: " + fake(40), scrub.CREDENTIAL),
        ("aws-secret-access-key: '" + fake(40) + "'", scrub.CREDENTIAL),
        ("redis://:" + fake(24) + "@cache.internal:6379/0", scrub.URL_PASSWORD),
    ],
)
def test_more_credential_shapes(snippet: str, kind: str) -> None:
    findings = find_secrets(snippet)

    assert [f.kind for f in findings] == [kind]
    assert snippet[findings[0].end :] in {"", ".", "'", '"', "@cache.internal:6379/0"}


def test_describe_names_each_kind_once_with_its_article() -> None:
    def found(*kinds: str) -> list[SecretFinding]:
        return [SecretFinding(kind=kind, start=i, end=i + 1) for i, kind in enumerate(kinds)]

    assert describe(found("GitHub token", "AWS access key id")) == (
        "a GitHub token and an AWS access key id"
    )
    assert describe(found(scrub.JWT, scrub.JWT, scrub.PRIVATE_KEY, "npm token")) == (
        "a JWT, a private key and an npm token"
    )
    assert describe(found("OpenAI API key")) == "an OpenAI API key"
    assert describe([scrub.MASKED_VALUE]) == "a masked secret"
    assert describe([]) == "no secrets"


def test_shannon_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)
    assert shannon_entropy("0123456789abcdef") == pytest.approx(4.0)
    assert shannon_entropy("aab") == pytest.approx(0.9183, abs=1e-4)


def test_a_mebibyte_of_memory_is_scanned_and_pathological_input_completes() -> None:
    line = "- Fixed in 3f786850e387550fdab836ed7e6dc881de23001b; token: rotate weekly.\n"
    planted = [p.text for p in PLANTED]
    chunk = line * 40
    text = "".join(chunk + f"- {snippet}\n" for snippet in planted)
    text = (text * (2**20 // len(text) + 1))[: 2**20]

    findings = find_secrets(text, MASKED_VALUES)

    assert len(findings) >= len(planted)
    for hostile in (
        "token=" * 200_000,
        "eyJ" + "a" * 2**20,
        "https://u:" * 100_000,
        "-----BEGIN RSA PRIVATE KEY-----\n" * 30_000,
        "QUFBQUFB" * 130_000,
        "a" * 2**20,
    ):
        find_secrets(hostile, masked=["AAAAAA", "aaaa"])


# --- refusals -----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_refusal_log_summarises_kinds_never_values() -> None:
    log = RefusalLog(clock=Clock())
    token = "ghp_" + fake(36)
    assert log.summary() == ""
    assert len(log) == 0

    log.record("edit_file", find_secrets(f"x {token}"))
    assert log.summary() == "1 memory edit refused: it contained a GitHub token"

    jwt = f"eyJ{fake(20, tag='h')}.{fake(20, tag='p')}.{fake(20)}"
    log.record("write_file", find_secrets(f"{token} {jwt}"))
    assert log.summary() == "2 memory edits refused: they contained a GitHub token and a JWT"
    assert [(e.tool, e.kinds) for e in log] == [
        ("edit_file", ("GitHub token",)),
        ("write_file", ("GitHub token", scrub.JWT)),
    ]
    assert log.entries[0].at == datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert token not in repr(log.entries) + log.summary()


WRITABLE = ".agent-memory/AGENTS.md"
MEMORY = "## Lessons\n\n- one\n- two\n"
REFUSED = "Refused: the new text contains what looks like {} (line "


class Tools:
    """The edit tools on a workspace with a memory file, with masked values and a refusal log."""

    def __init__(self, root: Path, memory: str | None = MEMORY) -> None:
        self.workspace = root
        if memory is not None:
            self.memory.parent.mkdir(parents=True)
            self.memory.write_text(memory, encoding="utf-8")
        self.files = MemoryFiles(
            workspace=root,
            read_only=(PurePosixPath("AGENTS.md"),),
            writable=PurePosixPath(WRITABLE),
            max_bytes=64 * 1024,
            masked=MASKED_VALUES,
        )
        self.clock = Clock()
        self.log = RefusalLog(clock=self.clock)
        self.edits = 0
        tools = make_memory_tools(self.files, self._count, refusals=self.log)
        self.by_name: dict[str, BaseTool] = {tool.name: tool for tool in tools}

    @property
    def memory(self) -> Path:
        return self.workspace / WRITABLE

    def _count(self) -> None:
        self.edits += 1

    def edit(self, old: str, new: str) -> str:
        args = {"file_path": WRITABLE, "old_string": old, "new_string": new}
        return self._invoke("edit_file", args)

    def write(self, content: str) -> str:
        return self._invoke("write_file", {"file_path": WRITABLE, "content": content})

    def _invoke(self, name: str, args: dict[str, Any]) -> str:
        result = self.by_name[name].invoke(args)
        assert isinstance(result, str)
        return result

    def snapshot(self) -> dict[str, bytes]:
        return {
            p.relative_to(self.workspace).as_posix(): p.read_bytes()
            for p in sorted(self.workspace.rglob("*"))
            if p.is_file()
        }


@pytest.fixture
def tools(tmp_path: Path) -> Tools:
    return Tools(tmp_path)


@pytest.mark.parametrize("planted", PLANTED[::4], ids=planted_id)
def test_write_file_refuses_a_secret(tmp_path: Path, planted: Planted) -> None:
    setup = Tools(tmp_path, memory=None)

    message = setup.write(f"# Memory\n\n{planted.text}\n")

    assert message.startswith("Refused: the new text contains what looks like ")
    assert "line 3: `" in message, "the line is named, so a false positive can be rephrased"
    assert_all_gone(message, planted, "")
    assert setup.snapshot() == {}, "not even the folder's file is created"
    assert setup.log.summary().startswith("1 memory edit refused: it contained ")
    assert setup.log.entries[0].tool == "write_file"
    assert setup.log.entries[0].at == setup.clock.now


def test_a_refusal_names_every_kind_it_saw(tools: Tools) -> None:
    token = "ghp_" + fake(36)
    key_id = "AKIA" + fake(16, string.ascii_uppercase + string.digits)

    message = tools.write(f"- token {token}\n- key {key_id}\n")

    assert message.startswith(REFUSED.format("a GitHub token and an AWS access key id"))
    assert "line 1: `- token [REDACTED GitHub token]`; line 2: `- key [REDACTED AWS" in message
    assert tools.memory.read_text(encoding="utf-8") == MEMORY


def test_masked_values_are_refused_even_encoded(tools: Tools) -> None:
    encoded = base64.b64encode(f"bot:{MASKED_DEPLOY_KEY}".encode()).decode()

    assert tools.edit("- one", f"- one (auth {encoded})").startswith(
        REFUSED.format("a masked secret")
    )
    assert tools.write(f"- {quote(MASKED_PASSWORD, safe='')}\n").startswith(
        REFUSED.format("a masked secret")
    )
    assert len(tools.log) == 2
    assert tools.memory.read_text(encoding="utf-8") == MEMORY


def test_clean_edits_still_work_and_are_not_logged(tools: Tools) -> None:
    assert tools.edit("- two\n", "- two\n- store tokens in `${{ secrets.X }}`\n") == (
        f"Edited {WRITABLE}"
    )
    assert tools.write("# Memory\n\n- commit 3f786850e387550fdab836ed7e6dc881de23001b\n") == (
        f"Wrote {WRITABLE}"
    )
    assert len(tools.log) == 0
    assert tools.edits == 2


def test_a_secret_already_in_memory_must_be_removed_before_other_edits(tmp_path: Path) -> None:
    token = "xo" + "xb-" + fake(12, string.digits) + "-" + fake(24)
    setup = Tools(tmp_path, memory=f"- one\n- old note with {token}\n")

    message = setup.edit("- one", "- uno")

    assert message.startswith("Refused: the new text still contains what looks like a Slack token")
    assert f"already in {WRITABLE}" in message
    assert "write_file" in message
    assert token not in message
    assert setup.memory.read_text(encoding="utf-8") == f"- one\n- old note with {token}\n"
    # Removing it is allowed: by an edit, or by rewriting the file without it.
    assert setup.edit(f" with {token}", "") == f"Edited {WRITABLE}"
    assert setup.memory.read_text(encoding="utf-8") == "- one\n- old note\n"
    assert len(setup.log) == 1


def test_memory_rewritten_from_the_redacted_prompt_is_accepted(tmp_path: Path) -> None:
    token = "ghp_" + fake(36)
    setup = Tools(tmp_path, memory=f"- old note with {token}\n")
    seen = redact(setup.memory.read_text(encoding="utf-8"))[0]

    assert setup.write(seen.replace("old note", "note")) == f"Wrote {WRITABLE}"
    assert setup.memory.read_text(encoding="utf-8") == "- note with [REDACTED GitHub token]\n"


def test_an_old_string_with_a_redaction_mark_points_to_write_file(tools: Tools) -> None:
    message = tools.edit("- [REDACTED GitHub token]", "- gone")

    assert "old_string was not found" in message
    assert "hidden secret" in message
    assert "write_file" in message


def test_tools_without_a_log_or_masked_values_still_refuse(tmp_path: Path) -> None:
    files = MemoryFiles(
        workspace=tmp_path,
        read_only=(),
        writable=PurePosixPath(WRITABLE),
        max_bytes=1024,
    )
    write = {tool.name: tool for tool in make_memory_tools(files)}["write_file"]
    token = "github" + "_pat_" + fake(22) + "_" + fake(59)

    result = write.invoke({"file_path": WRITABLE, "content": token})

    assert result.startswith(REFUSED.format("a GitHub token"))
    assert not (tmp_path / WRITABLE).exists()


def test_memory_files_never_show_masked_values(tmp_path: Path) -> None:
    settings = Settings(memory_path=PurePosixPath(".mem"))

    files = MemoryFiles.from_settings(settings, tmp_path, masked={"zz-secret-2", "aa-secret-1"})

    assert files.masked == ("aa-secret-1", "zz-secret-2")
    assert "secret" not in repr(files)
    assert MemoryFiles.from_settings(settings, tmp_path).masked == ()


# --- the middleware -----------------------------------------------------------------------------


def test_middleware_refuses_through_the_agent_and_keeps_the_log(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("- repo rule\n", encoding="utf-8")
    setup = Tools(tmp_path)
    token = "sk-" + "ant-api03-" + fake(93, string.ascii_letters + string.digits + "-_") + "AA"
    model = ScriptedChatModel.from_script(
        tool_call(
            "edit_file",
            {"file_path": WRITABLE, "old_string": "- two", "new_string": f"- key {token}"},
        ),
        "Done.",
    )
    middleware = MemoryMiddleware(setup.files, refusals=setup.log)

    result = create_agent(model, middleware=[middleware]).invoke(
        {"messages": [HumanMessage("Review PR #7")]}
    )

    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert str(reply.content).startswith(REFUSED.format("an Anthropic API key"))
    assert middleware.refusals is setup.log
    assert middleware.refusals.summary() == (
        "1 memory edit refused: it contained an Anthropic API key"
    )
    assert setup.memory.read_text(encoding="utf-8") == MEMORY
    assert all(token not in prompt for prompt in model.system_prompts)


def test_middleware_has_its_own_log_by_default(tmp_path: Path) -> None:
    setup = Tools(tmp_path)

    middleware = MemoryMiddleware(setup.files)
    write = {tool.name: tool for tool in middleware.tools}["write_file"]
    write.invoke({"file_path": WRITABLE, "content": "AKIA" + fake(16, string.ascii_uppercase)})

    assert middleware.refusals.summary() == (
        "1 memory edit refused: it contained an AWS access key id"
    )


def test_secrets_already_in_memory_are_redacted_from_the_prompt(tmp_path: Path) -> None:
    token = "ghp_" + fake(36)
    (tmp_path / "AGENTS.md").write_text(f"- ci password: {MASKED_PASSWORD}\n", encoding="utf-8")
    setup = Tools(tmp_path, memory=f"- old note with {token}\n")

    block = MemoryMiddleware(setup.files).memory_block()

    assert token not in block
    assert MASKED_PASSWORD not in block
    assert "- old note with [REDACTED GitHub token]" in block
    assert "- ci password: [REDACTED masked secret]" in block


def test_a_slack_token_needs_a_digit_of_its_own_and_is_read_in_one_pass() -> None:
    """Issue 25: the digit's look ahead ran to the end of the run from every ``xoxb-`` (79 s for
    200 KB of ``xoxb-`` repeated); it now looks within the token. Timing is in bench/scrubber.py."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    body = "".join(letters[(n * 31 + 7) % 52] for n in range(230)) + "7QzR"  # its digit late
    assert [f.kind for f in find_secrets(f"token xoxb-{body} here", ())] == ["Slack token"]
    assert find_secrets("xoxb-" * 2_000, ()) == []
    assert find_secrets("xoxb-" + "A" * 300, ()) == []  # longer than any Slack token, no digit
