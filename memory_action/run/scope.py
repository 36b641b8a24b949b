"""Settings + RunContext → ``MemoryScope``: which keys to restore, which key to save, and whether
this run may write. A pure function with a table of tests; see the design's scope section.

Key layout (``/`` separates parts; user-given parts are percent-encoded so they cannot contain
``/`` or ``,``, and every prefix ends in ``/`` so ``pr-1/`` never matches ``pr-10/``)::

    memory-agent/v1/<agent>/repo/committed/<save>
    memory-agent/v1/<agent>/repo/pr-<N>/<save>              a PR's overlay
    memory-agent/v1/<agent>/branch/<branch>/committed/<save>
    memory-agent/v1/<agent>/branch/<branch>/pr-<N>/<save>
    memory-agent/v1/<agent>/pr/<N>/committed/<save>

    <save> = <run_id>-<attempt>-<job>-<nonce>

Every save's key is unique: the job (``GITHUB_JOB``) tells apart two jobs of one run, and the
random nonce two legs of one matrix job (they share the job's id). The cache refuses a second
save under an existing key, so a shared key would lose the second job's memory.

The ``v1`` is the key format's version: a format change never reads old entries by accident.
Restore never falls back across agents or scopes: every restore key starts with the agent's and
the scope's own prefix.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import quote

from memory_action.memory.state import Layer
from memory_action.run.context import RunContext
from memory_action.run.settings import ScopeKind, Settings
from memory_action.safety.scrub import find_secrets
from memory_action.store.base import RestoreKeys
from memory_action.store.keys import key_problem, keys_problem

KEY_FORMAT = "memory-agent/v1"
MAX_ENCODED_PART = 120
MAX_ENCODED_HEAD = 40  # the readable head kept before the hash of a part too long to keep
SECRET_DIGEST_LENGTH = 16  # hex digits of the hash that stands for a secret in a branch's name
NONCE_BYTES = 4  # 8 hex digits: matrix legs of one job never meet (1 in 4 billion per pair)


@dataclass(frozen=True, kw_only=True)
class MemoryScope:
    kind: ScopeKind
    description: str  # for people: "repository memory (default branch main)"
    restore: RestoreKeys | None  # None: nothing this run can see
    committed_prefix: str | None
    overlay_prefix: str | None
    save_key: str | None  # None: this run does not save (see write_note)
    layer: Layer | None  # the layer save_key writes
    may_write: bool
    write_note: str  # why this run may not write ("" when it may)
    committed_ref: str = ""  # the ref whose cache scope holds the committed entries

    def layer_of(self, key: str) -> Layer | None:
        """Which layer a restored key belongs to."""
        if self.overlay_prefix and key.startswith(self.overlay_prefix):
            return Layer.OVERLAY
        if self.committed_prefix and key.startswith(self.committed_prefix):
            return Layer.COMMITTED
        return None


def _quote(value: str) -> str:
    # surrogatepass: a ref read from the environment may carry undecodable bytes as surrogates.
    return quote(value, safe="", errors="surrogatepass")


def encode_part(value: str) -> str:
    """Percent-encode a user-given key part; long ones keep a readable head and a hash.

    The head is bounded by its *encoded* length: one non-ASCII character encodes to up to 12.
    """
    encoded = _quote(value)
    if len(encoded) <= MAX_ENCODED_PART:
        return encoded
    digest = hashlib.sha256(value.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
    head = ""
    for char in value:
        piece = _quote(char)
        if len(head) + len(piece) > MAX_ENCODED_HEAD:
            break
        head += piece
    return f"{head}~{digest}"


def branch_part(branch: str) -> str:
    """The key part of a branch: each secret in its name (a token pasted into a branch name)
    replaced by a hash of it, so the key, and the folder the git store names by it, never holds
    the secret, while two branches stay apart and one branch keeps its key from run to run."""
    kept, position = [], 0
    for found in find_secrets(branch):
        secret = branch[found.start : found.end]
        digest = hashlib.sha256(secret.encode("utf-8", errors="surrogatepass")).hexdigest()
        kept += [branch[position : found.start], f"~{digest[:SECRET_DIGEST_LENGTH]}"]
        position = found.end
    return encode_part("".join([*kept, branch[position:]]))


def agent_prefix(agent_name: str) -> str:
    """What every key of one agent starts with (see the layout)."""
    return f"{KEY_FORMAT}/{agent_name.lower()}/"


def repo_committed_prefix(agent_name: str) -> str:
    """The prefix of the agent's committed repository memory."""
    return f"{agent_prefix(agent_name)}repo/committed/"


def new_nonce() -> str:
    """The random part of a save key."""
    return secrets.token_hex(NONCE_BYTES)


def save_suffix(run_id: str, attempt: str, job: str, nonce: str) -> str:
    """The last part of a save key: unique per run, attempt, job and save (see the layout)."""
    return f"{run_id}-{attempt}-{encode_part(job) if job else 'job'}-{nonce}"


def _run_suffix(context: RunContext, nonce: str | None) -> str:
    nonce = nonce if nonce is not None else new_nonce()
    return save_suffix(context.run_id, context.run_attempt, context.job, nonce)


def _scope_target(
    settings: Settings, context: RunContext
) -> tuple[str | None, str | None, str, str]:
    """(committed prefix, overlay prefix, description, a reason the scope cannot be written)."""
    base, pr = agent_prefix(settings.agent_name), context.pull_request
    overlay_part = f"pr-{pr.number}/" if pr is not None else None
    if settings.memory_scope is ScopeKind.PR:
        if pr is None:
            return None, None, "pull request memory (not available: no pull request)", ""
        return f"{base}pr/{pr.number}/committed/", None, f"memory of pull request #{pr.number}", ""
    if settings.memory_scope is ScopeKind.REPO:
        committed = repo_committed_prefix(settings.agent_name)
        overlay = f"{base}repo/{overlay_part}" if overlay_part else None
        description = f"repository memory (default branch {context.default_branch})"
        off_default = pr is None and not context.on_default_branch
        reason = (
            f"repository memory is written only by runs on {context.default_branch}"
            if off_default
            else ""
        )
        return committed, overlay, description, reason
    branch = pr.base_ref if pr is not None and pr.base_ref else context.branch
    if not branch:
        branch = context.default_branch
    prefix = f"{base}branch/{branch_part(branch)}/"
    overlay = f"{prefix}{overlay_part}" if overlay_part else None
    return f"{prefix}committed/", overlay, f"memory of branch {branch}", ""


def compute_scope(settings: Settings, context: RunContext, nonce: str | None = None) -> MemoryScope:
    """``nonce``: the random part of the save key (tests fix it; by default a new one)."""
    committed, overlay, description, scope_reason = _scope_target(settings, context)
    prefixes = tuple(p for p in (overlay, committed) if p)
    restore = RestoreKeys(primary=prefixes[0], restore=prefixes[1:]) if prefixes else None
    layer = Layer.OVERLAY if overlay else Layer.COMMITTED
    target = overlay or committed
    note = scope_reason or context.write_note
    if not settings.enable_memory:
        note = "enable_memory is false"
    elif target is None:
        note = note or "this scope has no memory for this event"
    may_write = not note and target is not None
    suffix = _run_suffix(context, nonce)
    save_key = f"{target}{suffix}" if may_write and target else None
    _check_keys(restore, save_key)
    return MemoryScope(
        kind=settings.memory_scope,
        description=description,
        restore=restore if settings.enable_memory else None,
        committed_prefix=committed,
        overlay_prefix=overlay,
        save_key=save_key,
        layer=layer if save_key else None,
        may_write=may_write,
        write_note=note,
        committed_ref=_committed_ref(settings, context),
    )


def committed_only(
    scope: MemoryScope, context: RunContext, nonce: str | None = None
) -> MemoryScope:
    """``scope`` reading and writing its committed memory alone, whatever the run's own layer:
    for a comment command by someone with write access, which changes committed memory directly
    (with the git store). None of the run's own limits apply: the caller decided it may."""
    committed = scope.committed_prefix
    if committed is None:
        return scope
    key = f"{committed}{_run_suffix(context, nonce)}"
    _check_keys(RestoreKeys(primary=committed), key)
    return dataclasses.replace(
        scope,
        restore=RestoreKeys(primary=committed),
        overlay_prefix=None,
        save_key=key,
        layer=Layer.COMMITTED,
        may_write=True,
        write_note="",
    )


def _committed_ref(settings: Settings, context: RunContext) -> str:
    """Where committed saves land: the PR's merge ref, the branch, or the default branch."""
    pr = context.pull_request
    if settings.memory_scope is ScopeKind.PR:
        return f"refs/pull/{pr.number}/merge" if pr is not None else ""
    if settings.memory_scope is ScopeKind.REPO:
        return f"refs/heads/{context.default_branch}"
    branch = pr.base_ref if pr is not None and pr.base_ref else context.branch
    return f"refs/heads/{branch or context.default_branch}"


def _check_keys(restore: RestoreKeys | None, save_key: str | None) -> None:
    """The cache's key rules; a violation here is a bug in this module, not user input."""
    problem = (keys_problem(restore.all()) if restore else None) or (
        key_problem(save_key) if save_key else None
    )
    if problem is not None:
        raise AssertionError(f"a key breaks the cache's key rules: {problem}")
