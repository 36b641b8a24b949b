"""``INPUT_*`` environment variables → one frozen, typed ``Settings``.

Parsing is strict and happens once, before any network call: a bad value raises ``InputError``
naming the input, the value and what is accepted.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TypeVar

from memory_action.errors import InputError, Setting
from memory_action.memory.markers import AGENT_NAME, AGENT_NAME_RULE
from memory_action.model.profile import (
    ModelProfile,
    ServedWindow,
    memory_kb_that_fits,
    profile_for,
)
from memory_action.safety.numbers import ascii_int
from memory_action.store.secret import Secret


class ScopeKind(enum.StrEnum):
    PR = "pr"
    BRANCH = "branch"
    REPO = "repo"


class StoreKind(enum.StrEnum):
    """Where committed memory lives: the Actions cache, a git branch, or git when allowed."""

    CACHE = "cache"
    GIT = "git"
    AUTO = "auto"


class MaintenanceOutput(enum.StrEnum):
    """Where maintenance's changes go with the git store: the memory branch, or a pull request
    against it."""

    COMMIT = "commit"
    PULL_REQUEST = "pull_request"


class Mode(enum.StrEnum):
    AUTO = "auto"
    REVIEW = "review"
    MAINTENANCE = "maintenance"


T = TypeVar("T")
EnumT = TypeVar("EnumT", bound=enum.StrEnum)

PROVIDERS = ("github", "openai", "anthropic")
# The environment variable each provider's own tools read its API key from.
API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """``provider:model``; ``github`` is GitHub Models through its OpenAI-compatible endpoint."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


DEFAULT_MODEL = "github:openai/gpt-4.1-mini"
DEFAULT_MAX_MEMORY_KB = 16  # max_memory_kb: auto, where the model's input limit leaves room
DEFAULT_MEMORY_PATH = PurePosixPath(".agent-memory")


# Fields of ``Settings`` that no input sets: what the run learned before it started.
LEARNED_FIELDS = frozenset({"served_window"})


@dataclass(frozen=True, kw_only=True)
class Settings:
    enable_memory: bool = True
    memory_scope: ScopeKind = ScopeKind.REPO
    memory_store: StoreKind = StoreKind.CACHE
    agent_name: str = "memory-agent"
    memory_path: PurePosixPath = DEFAULT_MEMORY_PATH
    memory_sources: tuple[str, ...] = ("AGENTS.md",)
    github_token: Secret = field(default_factory=lambda: Secret(""))
    model: ModelSpec = ModelSpec(provider="github", name="openai/gpt-4.1-mini")
    model_base_url: str = ""
    model_api_key: Secret = field(default_factory=lambda: Secret(""))
    prompt: str = ""
    mode: Mode = Mode.AUTO
    max_memory_kb: int = field(
        default_factory=lambda: auto_memory_kb(profile_for("github", "openai/gpt-4.1-mini"))
    )
    timeout_minutes: int = 10
    post_comment: bool = True
    max_input_tokens: int | None = None  # None: the model profile's input limit
    served_window: ServedWindow | None = None  # what the model's server said of its window
    max_model_calls: int = 12
    exclude: tuple[str, ...] = ()  # globs of changed files the review skips
    skills_path: PurePosixPath | None = None  # a folder of SKILL.md files; None: no skills
    maintenance_output: MaintenanceOutput = MaintenanceOutput.COMMIT

    @property
    def memory_file(self) -> PurePosixPath:
        """The one writable memory file, relative to the workspace."""
        return self.memory_path / "AGENTS.md"

    @property
    def max_memory_bytes(self) -> int:
        return self.max_memory_kb * 1024

    @property
    def profile(self) -> ModelProfile:
        """What the model takes per request (its input limit, output cap, rate limits)."""
        return profile_for(
            self.model.provider,
            self.model.name,
            max_input_tokens=self.max_input_tokens,
            served=self.served_window,
        )

    @property
    def request_timeout_s(self) -> float:
        """How long one model request may take: as long as the run's time budget (a local
        model on a small machine can take minutes to answer)."""
        return self.timeout_minutes * 60.0


# A model name as providers spell them (``openai/gpt-4.1``, ``ft:gpt-4o:acme::id``, ``llama3:8b``):
# no space or control character, which could end the ``::error::`` or log line it is shown in.
MODEL_NAME = re.compile(r"[A-Za-z0-9._:/@+-]{1,200}")
# memory_path is cleared and written by the run: each folder name is plain ASCII (no ``~``, no
# space or control character), and it never reaches into what version control or GitHub read.
MEMORY_PATH_PART = re.compile(r"[A-Za-z0-9._-]{1,64}")
MEMORY_PATH_MAX = 200
VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".sl", "cvs"})
CHECKOUT_FILES = frozenset({".github", ".gitattributes", ".gitignore", ".gitmodules"})
MAX_MEMORY_KB = (1, 1024)
TIMEOUT_MINUTES = (1, 360)
MAX_INPUT_TOKENS = (2_000, 2_000_000)
MAX_MODEL_CALLS = (1, 100)


def _bad(name: str, value: str, accepted: str) -> InputError:
    return InputError(
        (Setting(name=name, lead=True), f" has the invalid value {value!r}; accepted: {accepted}.")
    )


def parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise _bad(name, raw, "true or false")


def parse_enum(name: str, raw: str, kind: type[EnumT]) -> EnumT:
    value = raw.strip().lower()
    for member in kind:
        if member.value == value:
            return member
    raise _bad(name, raw, " | ".join(m.value for m in kind))


def parse_int(name: str, raw: str, bounds: tuple[int, int]) -> int:
    low, high = bounds
    value = raw.strip()
    number = ascii_int(value, max_digits=9)
    if number is not None and low <= number <= high:
        return number
    raise _bad(name, raw, f"a whole number from {low} to {high}")


def parse_agent_name(raw: str) -> str:
    value = raw.strip()
    if AGENT_NAME.fullmatch(value):
        return value
    raise _bad("agent_name", raw, AGENT_NAME_RULE)


def parse_workspace_path(name: str, raw: str) -> PurePosixPath:
    """A path relative to the workspace that stays inside it."""
    value = raw.strip()
    path = PurePosixPath(value)
    outside = path.is_absolute() or ".." in path.parts or path == PurePosixPath(".")
    if not value or outside or "\\" in value:
        raise _bad(
            name, raw, "a relative path inside the workspace, without '..', e.g. .agent-memory"
        )
    return path


def parse_memory_path(raw: str) -> PurePosixPath:
    """A folder the run may safely clear and write (see ``MEMORY_PATH_PART``); a long bad value
    is shown shortened."""
    value = raw.strip()
    path = PurePosixPath(value)
    names = [part.lower() for part in path.parts]
    plain = (
        0 < len(value) <= MEMORY_PATH_MAX
        and all(MEMORY_PATH_PART.fullmatch(part) for part in path.parts)  # no "/" part
        and ".." not in names
        and not VCS_FOLDERS.intersection(names)
    )
    if plain and names and names[-1] not in CHECKOUT_FILES:
        return path
    shown = value if len(value) <= 80 else f"{value[:60]}… ({len(value):,} characters)"
    raise _bad(
        "memory_path",
        shown,
        f"a relative path inside the workspace, without '..', of at most {MEMORY_PATH_MAX} "
        "characters, whose folder names are letters, digits, '.', '_' and '-' (no '~', space "
        "or line break), never a version control folder such as .git nor .github itself; "
        "e.g. .agent-memory",
    )


def parse_sources(raw: str) -> tuple[str, ...]:
    sources = tuple(line.strip() for line in raw.splitlines() if line.strip())
    for source in sources:
        parse_workspace_path("memory_sources", source)
    return sources


def parse_model(raw: str) -> ModelSpec:
    value = raw.strip()
    provider, sep, name = value.partition(":")
    if sep and provider.lower() in PROVIDERS and MODEL_NAME.fullmatch(name.strip()):
        return ModelSpec(provider=provider.lower(), name=name.strip())
    raise _bad(
        "model",
        raw,
        "provider:model with provider github, openai or anthropic and a model name of "
        "letters, digits and . _ : / @ + - (no space or line break), e.g. " + DEFAULT_MODEL,
    )


def parse_base_url(raw: str) -> str:
    value = raw.strip()
    if not value or re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
        return value.rstrip("/")
    raise _bad("model_base_url", raw, "empty, or an http(s) URL such as http://localhost:8000/v1")


def parse_exclude(raw: str) -> tuple[str, ...]:
    globs = tuple(line.strip() for line in raw.splitlines() if line.strip())
    for glob in globs:
        if glob.startswith("/") or "\\" in glob or ".." in PurePosixPath(glob).parts:
            raise _bad("exclude", glob, "repository-relative globs, one per line, e.g. docs/**")
    return globs


def memory_budget(raw: str | None, profile: ModelProfile) -> int:
    """``max_memory_kb``: a number, or ``auto`` (the default): 16 KiB, or less where the model's
    input limit needs room for the pull request; a number that leaves no such room is an error."""
    fits = memory_kb_that_fits(profile.input_tokens)
    if raw is None or raw.strip().lower() == "auto":
        if fits < MAX_MEMORY_KB[0]:
            raise _no_room(profile, "auto")
        return auto_memory_kb(profile)
    value = parse_int("max_memory_kb", raw, MAX_MEMORY_KB)
    if value > fits:
        raise _no_room(profile, str(value))
    return value


def auto_memory_kb(profile: ModelProfile) -> int:
    return min(DEFAULT_MAX_MEMORY_KB, memory_kb_that_fits(profile.input_tokens))


def _no_room(profile: ModelProfile, value: str) -> InputError:
    fits = memory_kb_that_fits(profile.input_tokens)
    budget = Setting(name="max_memory_kb")
    fix = ("lower ", budget, f" to {fits} or less, or ") if fits >= 1 else ()
    return InputError(
        (
            Setting(name="max_memory_kb", lead=True),
            f" ({value}) does not fit the model's input limit with room for the pull request: ",
            *profile.words(),
            "; ",
            *fix,
            "raise ",
            Setting(name="max_input_tokens"),
            " if your model accepts more.",
        )
    )


# Asks the model's server for its window: (model name, base URL, API key) → what it said.
WindowQuestion = Callable[[str, str, str], ServedWindow | None]


def parse_settings(env: Mapping[str, str], ask_server: WindowQuestion | None = None) -> Settings:
    """Parse every input (``INPUT_<NAME>``); a missing or empty input takes its default.

    With ``ask_server``, the server at ``model_base_url`` is asked for its model's window when
    neither ``max_input_tokens`` nor the table of known models gives one; no other input makes
    a network call.
    """
    defaults = Settings()

    def get(name: str) -> str | None:
        raw = env.get(f"INPUT_{name.upper()}")
        return raw if raw is not None and raw.strip() else None

    def pick(name: str, parse: Callable[[str], T], default: T) -> T:
        raw = get(name)
        return default if raw is None else parse(raw)

    model = pick("model", parse_model, defaults.model)
    base_url = pick("model_base_url", parse_base_url, "")
    max_input = pick(
        "max_input_tokens", lambda r: parse_int("max_input_tokens", r, MAX_INPUT_TOKENS), None
    )
    api_key = Secret((get("model_api_key") or "").strip())
    profile = profile_for(model.provider, model.name, max_input_tokens=max_input)
    served = None
    if ask_server is not None and profile.source == "guess" and base_url:
        served = ask_server(model.name, base_url, provider_key(model.provider, api_key, env))
        profile = profile_for(model.provider, model.name, served=served)
    return Settings(
        enable_memory=pick("enable_memory", lambda r: parse_bool("enable_memory", r), True),
        memory_scope=pick(
            "memory_scope", lambda r: parse_enum("memory_scope", r, ScopeKind), ScopeKind.REPO
        ),
        agent_name=pick("agent_name", parse_agent_name, defaults.agent_name),
        memory_path=pick("memory_path", parse_memory_path, defaults.memory_path),
        memory_sources=pick("memory_sources", parse_sources, defaults.memory_sources),
        github_token=Secret((get("github_token") or "").strip()),
        model=model,
        model_base_url=base_url,
        model_api_key=api_key,
        prompt=(get("prompt") or "").strip(),
        mode=pick("mode", lambda r: parse_enum("mode", r, Mode), Mode.AUTO),
        max_memory_kb=memory_budget(get("max_memory_kb"), profile),
        timeout_minutes=pick(
            "timeout_minutes", lambda r: parse_int("timeout_minutes", r, TIMEOUT_MINUTES), 10
        ),
        post_comment=pick("post_comment", lambda r: parse_bool("post_comment", r), True),
        max_input_tokens=max_input,
        served_window=served,
        max_model_calls=pick(
            "max_model_calls", lambda r: parse_int("max_model_calls", r, MAX_MODEL_CALLS), 12
        ),
        exclude=pick("exclude", parse_exclude, ()),
        memory_store=pick(
            "memory_store", lambda r: parse_enum("memory_store", r, StoreKind), StoreKind.CACHE
        ),
        skills_path=pick("skills_path", lambda r: parse_workspace_path("skills_path", r), None),
        maintenance_output=pick(
            "maintenance_output",
            lambda r: parse_enum("maintenance_output", r, MaintenanceOutput),
            MaintenanceOutput.COMMIT,
        ),
    )


def provider_api_key(settings: Settings, env: Mapping[str, str]) -> str:
    """The model's API key: the ``model_api_key`` input, else the provider's own variable
    (``API_KEY_VARIABLES``); "" when neither is set or the provider takes none (github)."""
    return provider_key(settings.model.provider, settings.model_api_key, env)


def provider_key(provider: str, model_api_key: Secret, env: Mapping[str, str]) -> str:
    variable = API_KEY_VARIABLES.get(provider)
    if variable is None:
        return ""
    return model_api_key.reveal() or env.get(variable, "").strip()


def check_credentials(settings: Settings, env: Mapping[str, str]) -> None:
    """The rules between inputs, checked before any network call: the action always talks to
    GitHub with ``github_token``, and an ``openai:`` or ``anthropic:`` model needs a key."""
    if not settings.github_token:
        raise InputError(
            "Input 'github_token' is empty: the action reads the pull request and posts its "
            "comment with it (and github: models run on it); use the default "
            "${{ github.token }}, as a secret is empty in runs for pull requests from forks."
        )
    variable = API_KEY_VARIABLES.get(settings.model.provider)
    if variable is not None and not provider_api_key(settings, env):
        hint = " (any non-empty value if the server needs none)" if settings.model_base_url else ""
        raise InputError(
            f"Input 'model_api_key' is empty and {variable} is not set, but model="
            f"{settings.model} needs an API key{hint}: e.g. model_api_key: "
            f"${{{{ secrets.{variable} }}}}."
        )
