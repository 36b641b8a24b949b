"""``parse_settings``: every input's default, every valid form and every invalid value.

An invalid value must raise ``InputError`` whose message is one line naming the input, the bad
value and what is accepted: that line becomes the job's ``::error::``.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import PurePosixPath

import pytest

from memory_action.errors import InputError, MemoryActionError
from memory_action.run.settings import (
    LEARNED_FIELDS,
    MaintenanceOutput,
    Mode,
    ModelSpec,
    ScopeKind,
    Settings,
    StoreKind,
    parse_settings,
)
from memory_action.store.secret import Secret

ALL_INPUTS = (
    "enable_memory",
    "memory_scope",
    "agent_name",
    "memory_path",
    "memory_sources",
    "github_token",
    "model",
    "model_base_url",
    "model_api_key",
    "prompt",
    "mode",
    "max_memory_kb",
    "timeout_minutes",
    "post_comment",
    "max_input_tokens",
    "max_model_calls",
    "exclude",
    "memory_store",
    "skills_path",
    "maintenance_output",
)


def parse_one(name: str, raw: str) -> Settings:
    env = {f"INPUT_{name.upper()}": raw}
    if name == "max_memory_kb":  # a large memory needs a model input limit with room for it
        env["INPUT_MAX_INPUT_TOKENS"] = "2000000"
    return parse_settings(env)


def parse_error(name: str, raw: str) -> str:
    with pytest.raises(InputError) as caught:
        parse_one(name, raw)
    return str(caught.value)


# -- defaults --------------------------------------------------------------------------------

DEFAULTS = [
    ("enable_memory", True),
    ("memory_scope", ScopeKind.REPO),
    ("agent_name", "memory-agent"),
    ("memory_path", PurePosixPath(".agent-memory")),
    ("memory_sources", ("AGENTS.md",)),
    ("github_token", Secret("")),
    ("model", ModelSpec(provider="github", name="openai/gpt-4.1-mini")),
    ("model_base_url", ""),
    ("model_api_key", Secret("")),
    ("prompt", ""),
    ("mode", Mode.AUTO),
    ("max_memory_kb", 7),  # auto: what leaves room in GitHub Models' 8,000 tokens
    ("timeout_minutes", 10),
    ("post_comment", True),
    ("max_input_tokens", None),
    ("max_model_calls", 12),
    ("exclude", ()),
    ("memory_store", StoreKind.CACHE),
    ("skills_path", None),
    ("maintenance_output", MaintenanceOutput.COMMIT),
]


def test_the_defaults_table_covers_every_input() -> None:
    assert {name for name, _ in DEFAULTS} == set(ALL_INPUTS)
    assert {f.name for f in fields(Settings)} - LEARNED_FIELDS == set(ALL_INPUTS)


BLANKS = {"missing": None, "empty": "", "blank": "  \n\t "}


@pytest.mark.parametrize(("name", "expected"), DEFAULTS, ids=[name for name, _ in DEFAULTS])
@pytest.mark.parametrize("form", BLANKS)
def test_a_missing_or_empty_input_takes_its_default(name: str, expected: object, form: str) -> None:
    raw = BLANKS[form]
    env = {} if raw is None else {f"INPUT_{name.upper()}": raw}
    assert getattr(parse_settings(env), name) == expected


def test_no_inputs_at_all_give_the_dataclass_defaults() -> None:
    settings = parse_settings({})
    assert settings == Settings()
    assert settings.memory_file == PurePosixPath(".agent-memory/AGENTS.md")
    assert settings.max_memory_bytes == 7 * 1024


def test_unrelated_environment_variables_are_ignored() -> None:
    env = {"GITHUB_TOKEN": "ghs_from_env", "MODEL": "nonsense", "INPUT_UNKNOWN": "x"}
    assert parse_settings(env) == Settings()


# -- valid forms -----------------------------------------------------------------------------

VALID = [
    # booleans, any case, surrounding space ignored
    ("enable_memory", "true", True),
    ("enable_memory", "True", True),
    ("enable_memory", "TRUE", True),
    ("enable_memory", "false", False),
    ("enable_memory", "False", False),
    ("enable_memory", "FALSE", False),
    ("enable_memory", " false\n", False),
    ("post_comment", "true", True),
    ("post_comment", "TRUE", True),
    ("post_comment", "false", False),
    ("post_comment", "FaLsE", False),
    # enums, any case
    ("memory_scope", "pr", ScopeKind.PR),
    ("memory_scope", "PR", ScopeKind.PR),
    ("memory_scope", "branch", ScopeKind.BRANCH),
    ("memory_scope", "Branch", ScopeKind.BRANCH),
    ("memory_scope", "repo", ScopeKind.REPO),
    ("memory_scope", " REPO ", ScopeKind.REPO),
    ("mode", "auto", Mode.AUTO),
    ("mode", "AUTO", Mode.AUTO),
    ("mode", "review", Mode.REVIEW),
    ("mode", "Review", Mode.REVIEW),
    ("mode", "maintenance", Mode.MAINTENANCE),
    ("mode", "MAINTENANCE", Mode.MAINTENANCE),
    ("memory_store", "git", StoreKind.GIT),
    ("memory_store", " Auto ", StoreKind.AUTO),
    ("memory_store", "CACHE", StoreKind.CACHE),
    # numbers at both bounds and in between
    ("max_memory_kb", "1", 1),
    ("max_memory_kb", "16", 16),
    ("max_memory_kb", "1024", 1024),
    ("max_memory_kb", " 64 ", 64),
    ("max_memory_kb", "0032", 32),
    ("timeout_minutes", "1", 1),
    ("timeout_minutes", "360", 360),
    ("timeout_minutes", "45", 45),
    # agent names
    ("agent_name", "memory-agent", "memory-agent"),
    ("agent_name", "a", "a"),
    ("agent_name", "Review.Bot_2", "Review.Bot_2"),
    ("agent_name", "x" * 64, "x" * 64),
    ("agent_name", "  padded  ", "padded"),
    ("agent_name", "a.b..c_", "a.b..c_"),
    ("agent_name", "9", "9"),
    # memory_path: relative, normalized
    ("memory_path", ".agent-memory", PurePosixPath(".agent-memory")),
    ("memory_path", "memory", PurePosixPath("memory")),
    ("memory_path", ".github/agent-memory", PurePosixPath(".github/agent-memory")),
    ("memory_path", "./memory/", PurePosixPath("memory")),
    ("memory_path", " memory\n", PurePosixPath("memory")),
    ("memory_path", "a/b.c/d_e-1", PurePosixPath("a/b.c/d_e-1")),
    ("memory_path", ".github/.agent-memory", PurePosixPath(".github/.agent-memory")),
    ("memory_path", ".gitlab-memory", PurePosixPath(".gitlab-memory")),
    # memory_sources: one per line, blank lines and surrounding space dropped, order kept
    ("memory_sources", "AGENTS.md", ("AGENTS.md",)),
    (
        "memory_sources",
        "AGENTS.md\n\n  docs/AGENTS.md  \n\n\n.github/org/AGENTS.md\n",
        ("AGENTS.md", "docs/AGENTS.md", ".github/org/AGENTS.md"),
    ),
    ("memory_sources", "b.md\r\na.md\r\n", ("b.md", "a.md")),
    # model, one per provider; the name keeps its case and any later colons
    (
        "model",
        "github:openai/gpt-4.1-mini",
        ModelSpec(provider="github", name="openai/gpt-4.1-mini"),
    ),
    ("model", "openai:gpt-4.1", ModelSpec(provider="openai", name="gpt-4.1")),
    (
        "model",
        "anthropic:claude-sonnet-4-5",
        ModelSpec(provider="anthropic", name="claude-sonnet-4-5"),
    ),
    ("model", "OpenAI:GPT-4o", ModelSpec(provider="openai", name="GPT-4o")),
    ("model", " GitHub:openai/gpt-4.1 ", ModelSpec(provider="github", name="openai/gpt-4.1")),
    (
        "model",
        "openai:ft:gpt-4o-mini:acme::abc123",
        ModelSpec(provider="openai", name="ft:gpt-4o-mini:acme::abc123"),
    ),
    ("model", "openai: gpt-4o ", ModelSpec(provider="openai", name="gpt-4o")),
    # base URL forms; a trailing slash is dropped
    ("model_base_url", "http://localhost:8000/v1", "http://localhost:8000/v1"),
    ("model_base_url", "https://llm.example.com/v1", "https://llm.example.com/v1"),
    ("model_base_url", "https://llm.example.com/v1/", "https://llm.example.com/v1"),
    ("model_base_url", "https://llm.example.com", "https://llm.example.com"),
    ("model_base_url", "https://llm.example.com/", "https://llm.example.com"),
    ("model_base_url", "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    ("model_base_url", "http://[::1]:8080/openai/v1", "http://[::1]:8080/openai/v1"),
    ("model_base_url", "  https://llm.example.com/v1  ", "https://llm.example.com/v1"),
    # free text
    ("prompt", "  Focus on the API layer.  ", "Focus on the API layer."),
    ("prompt", "Line one.\n\nLine two.", "Line one.\n\nLine two."),
]


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    VALID,
    ids=[f"{name}={raw[:30]!r}" for name, raw, _ in VALID],
)
def test_valid_value(name: str, raw: str, expected: object) -> None:
    assert getattr(parse_one(name, raw), name) == expected


def test_every_input_is_read_from_its_own_variable() -> None:
    env = {
        "INPUT_ENABLE_MEMORY": "false",
        "INPUT_MEMORY_SCOPE": "branch",
        "INPUT_AGENT_NAME": "reviewer",
        "INPUT_MEMORY_PATH": "mem",
        "INPUT_MEMORY_SOURCES": "ORG.md\nAGENTS.md",
        "INPUT_GITHUB_TOKEN": "ghs_token",
        "INPUT_MODEL": "anthropic:claude-haiku-4-5",
        "INPUT_MODEL_BASE_URL": "https://llm.example.com/v1",
        "INPUT_MODEL_API_KEY": "sk-ant-key",
        "INPUT_PROMPT": "Be brief.",
        "INPUT_MODE": "review",
        "INPUT_MAX_MEMORY_KB": "32",
        "INPUT_TIMEOUT_MINUTES": "5",
        "INPUT_POST_COMMENT": "false",
    }
    assert parse_settings(env) == Settings(
        enable_memory=False,
        memory_scope=ScopeKind.BRANCH,
        agent_name="reviewer",
        memory_path=PurePosixPath("mem"),
        memory_sources=("ORG.md", "AGENTS.md"),
        github_token=Secret("ghs_token"),
        model=ModelSpec(provider="anthropic", name="claude-haiku-4-5"),
        model_base_url="https://llm.example.com/v1",
        model_api_key=Secret("sk-ant-key"),
        prompt="Be brief.",
        mode=Mode.REVIEW,
        max_memory_kb=32,
        timeout_minutes=5,
        post_comment=False,
    )


def test_derived_properties_follow_the_inputs() -> None:
    settings = parse_settings(
        {
            "INPUT_MEMORY_PATH": "mem/agent",
            "INPUT_MAX_MEMORY_KB": "1024",
            "INPUT_MAX_INPUT_TOKENS": "2000000",
        }
    )
    assert settings.memory_file == PurePosixPath("mem/agent/AGENTS.md")
    assert settings.max_memory_bytes == 1024 * 1024


# -- invalid values --------------------------------------------------------------------------

BOOL = "true or false"
SCOPES = "pr | branch | repo"
MODES = "auto | review | maintenance"
KB = "a whole number from 1 to 1024"
MINUTES = "a whole number from 1 to 360"
AGENT = "1 to 64 of letters, digits, '.', '_' and '-', a letter or digit first, no '.' last"
INSIDE = "a relative path inside the workspace, without '..'"
MODEL = "provider:model with provider github, openai or anthropic"
URL = "empty, or an http(s) URL"

INVALID = [
    *[("memory_store", raw, "cache | git | auto") for raw in ("s3", "branch", "git,cache")],
    *[("enable_memory", raw, BOOL) for raw in ("yes", "no", "1", "0", "on", "off", "t", "truee")],
    *[("post_comment", raw, BOOL) for raw in ("yes", "1", "on", "y")],
    *[("memory_scope", raw, SCOPES) for raw in ("prs", "repository", "global", "pr,branch")],
    *[("mode", raw, MODES) for raw in ("reveiw", "maint", "manual", "auto review")],
    *[
        ("max_memory_kb", raw, KB)
        for raw in ("0", "-1", "1025", "1.5", "ten", "+5", "1e3", "0x10", "16 kb", "٣", "9" * 5000)
    ],
    *[("timeout_minutes", raw, MINUTES) for raw in ("0", "-1", "361", "1.5", "ten", "10m")],
    *[
        ("agent_name", raw, AGENT)
        for raw in ("x" * 65, "my agent", "org/agent", "agent,1", "ägent", "agent\\x", "a:b")
    ],
    # a path component of every key and of the memory branch's tree: no ".", "..", ".git"
    *[
        ("agent_name", raw, AGENT)
        for raw in (".", "..", "...", ".git", ".agent", "-agent", "_agent", "agent.", "a..")
    ],
    *[
        ("memory_path", raw, INSIDE)
        for raw in ("/abs/memory", "../memory", "mem/../../x", "..", ".", "./", "mem\\agent")
    ],
    # memory_path is cleared and written: plain folder names, nothing git or GitHub reads
    *[
        ("memory_path", raw, INSIDE)
        for raw in (
            ".git",
            ".GIT",
            "mem/.git/hooks",
            "vendor/.hg",
            ".github",
            ".gitmodules",
            "~",
            "~/memory",
            "mem\nsecond",
            "mem\x00",
            "my memory",
            "mém",
            "x" * 65,
        )
    ],
    *[
        ("model", raw, MODEL)
        for raw in ("github:openai/gpt-4.1\nmore", "openai:gpt 4", "openai:\x1b[31mred", "openai:ü")
    ],
    *[("model", raw, MODEL) for raw in ("gpt-4o", "azure:gpt-4o", "openai:", "openai:   ", ":gpt")],
    *[
        ("model_base_url", raw, URL)
        for raw in (
            "ftp://llm.example.com",
            "not a url",
            "https://",
            "llm.example.com/v1",
            "http:///v1",
        )
    ],
]


@pytest.mark.parametrize(
    ("name", "raw", "accepted"),
    INVALID,
    ids=[f"{name}={raw[:30]!r}" for name, raw, _ in INVALID],
)
def test_invalid_value_is_one_line_naming_input_value_and_accepted(
    name: str, raw: str, accepted: str
) -> None:
    message = parse_error(name, raw)
    assert "\n" not in message
    assert f"Input '{name}'" in message
    assert repr(raw) in message
    assert accepted in message


@pytest.mark.parametrize(
    ("raw", "bad_line"),
    [
        pytest.param("AGENTS.md\n../other/AGENTS.md", "../other/AGENTS.md", id="parent"),
        pytest.param("AGENTS.md\n\n  /etc/AGENTS.md  ", "/etc/AGENTS.md", id="absolute"),
        pytest.param("docs\\AGENTS.md", "docs\\AGENTS.md", id="backslash"),
        pytest.param("docs/../../AGENTS.md\nAGENTS.md", "docs/../../AGENTS.md", id="nested-parent"),
        pytest.param("AGENTS.md\n.", ".", id="workspace-itself"),
    ],
)
def test_invalid_memory_source_names_the_bad_line(raw: str, bad_line: str) -> None:
    message = parse_error("memory_sources", raw)
    assert "\n" not in message
    assert "Input 'memory_sources'" in message
    assert repr(bad_line) in message
    assert INSIDE in message


def test_a_value_with_a_newline_still_gives_one_line() -> None:
    message = parse_error("memory_path", "/abs\nmore")
    assert "\n" not in message
    assert "'/abs\\nmore'" in message


def test_a_very_long_memory_path_is_shown_shortened() -> None:
    assert parse_one("memory_path", "/".join(["abcdefghi"] * 20)).memory_path  # 199 characters
    assert "(208 characters)" in parse_error("memory_path", "/".join(["abcdefghij"] * 19))
    message = parse_error("memory_path", "x" * 10_000)

    assert "Input 'memory_path'" in message
    assert "(10,000 characters)" in message
    assert len(message) < 600


@pytest.mark.parametrize(
    ("model", "spec"),
    [
        ("openai:gpt-4o-2024-08-06", ModelSpec(provider="openai", name="gpt-4o-2024-08-06")),
        ("openai:llama3.1:8b", ModelSpec(provider="openai", name="llama3.1:8b")),
        (
            "openai:qwen/qwen-2.5@latest+x",
            ModelSpec(provider="openai", name="qwen/qwen-2.5@latest+x"),
        ),
    ],
)
def test_model_names_as_providers_spell_them_are_accepted(model: str, spec: ModelSpec) -> None:
    assert parse_one("model", model).model == spec


def test_input_error_is_an_expected_failure_with_exit_code_2() -> None:
    with pytest.raises(MemoryActionError) as caught:
        parse_one("enable_memory", "yes")
    assert caught.value.exit_code == 2


def test_the_first_bad_input_fails_before_any_other_is_used() -> None:
    with pytest.raises(InputError, match="timeout_minutes"):
        parse_settings({"INPUT_TIMEOUT_MINUTES": "0", "INPUT_GITHUB_TOKEN": "ghs_x"})


# -- secrets ---------------------------------------------------------------------------------

TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
API_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"


def test_secrets_are_kept_but_never_in_repr_or_str() -> None:
    settings = parse_settings({"INPUT_GITHUB_TOKEN": f" {TOKEN}\n", "INPUT_MODEL_API_KEY": API_KEY})
    assert settings.github_token.reveal() == TOKEN
    assert settings.model_api_key.reveal() == API_KEY
    for text in (
        repr(settings),
        str(settings),
        repr(settings.github_token),
        f"{settings.model_api_key}",
    ):
        assert TOKEN not in text
        assert API_KEY not in text
    assert "Secret('***')" in repr(settings)


@pytest.mark.parametrize(
    ("value", "shown", "truthy"),
    [
        pytest.param("s3cr3t", "Secret('***')", True, id="set"),
        pytest.param("", "Secret('')", False, id="empty"),
    ],
)
def test_secret_repr_and_truth(value: str, shown: str, truthy: bool) -> None:
    secret = Secret(value)
    assert repr(secret) == str(secret) == shown
    assert bool(secret) is truthy
    assert secret == Secret(value)
    assert secret != value
    assert hash(secret) == hash(Secret(value))


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.agent_name = "other"  # type: ignore[misc]


# -- the model's input limit, the call budget, exclusions ----------------------------------------


def test_a_memory_budget_that_leaves_no_room_for_the_pull_request_names_both_inputs() -> None:
    with pytest.raises(InputError) as caught:
        parse_settings({"INPUT_MAX_MEMORY_KB": "16"})
    text = str(caught.value)
    assert text.startswith("Input 'max_memory_kb' (16) does not fit the model's input limit")
    assert "\n" not in text
    assert "max_memory_kb" in text and "max_input_tokens" in text
    assert "github:openai/gpt-4.1-mini: 8,000 tokens in" in text
    assert "lower the max_memory_kb input to 7 or less" in text


def test_auto_memory_follows_the_input_limit() -> None:
    assert parse_settings({"INPUT_MAX_MEMORY_KB": "auto"}).max_memory_kb == 7
    assert parse_settings({"INPUT_MODEL": "openai:gpt-4.1-mini"}).max_memory_kb == 16
    assert parse_settings({"INPUT_MAX_INPUT_TOKENS": "16000"}).max_memory_kb == 16


def test_a_raised_input_limit_admits_a_larger_memory() -> None:
    env = {"INPUT_MAX_MEMORY_KB": "16", "INPUT_MAX_INPUT_TOKENS": "64000"}
    settings = parse_settings(env)
    assert (settings.max_memory_kb, settings.profile.input_tokens) == (16, 64_000)


@pytest.mark.parametrize("raw", ["1999", "0", "2000001", "8k", "-5"])
def test_max_input_tokens_is_bounded(raw: str) -> None:
    assert "a whole number from 2000 to 2000000" in parse_error("max_input_tokens", raw)


@pytest.mark.parametrize("raw", ["0", "101", "twelve"])
def test_max_model_calls_is_bounded(raw: str) -> None:
    assert "a whole number from 1 to 100" in parse_error("max_model_calls", raw)


def test_exclude_takes_globs_one_per_line() -> None:
    settings = parse_one("exclude", "docs/**\n\n  *.snap  \n")
    assert settings.exclude == ("docs/**", "*.snap")


@pytest.mark.parametrize("raw", ["/etc/*", "../x/*", "a\\b"])
def test_exclude_refuses_paths_outside_the_repository(raw: str) -> None:
    assert "repository-relative globs" in parse_error("exclude", raw)


def test_skills_path_and_maintenance_output() -> None:
    assert parse_one("skills_path", " .agents/skills ").skills_path == PurePosixPath(
        ".agents/skills"
    )
    assert "skills_path" in parse_error("skills_path", "../skills")
    output = parse_one("maintenance_output", "pull_request").maintenance_output
    assert output is MaintenanceOutput.PULL_REQUEST
    assert "commit | pull_request" in parse_error("maintenance_output", "push")
