"""Settings in the CLI's words: a flag, or the variable the CLI reads a secret from.

Messages name settings as ``errors.Setting``; the action renders them as inputs
(``errors.input_words``), the CLI with ``cli_words``: one message, two wordings."""

from __future__ import annotations

from memory_action.errors import Setting

API_KEY_VARIABLE = "MEMORY_AGENT_MODEL_API_KEY"
# Settings the CLI takes some other way than a flag named like the input.
_NOT_A_FLAG_OF_THE_SAME_NAME = {
    "model_api_key": f"${API_KEY_VARIABLE}",
    "github_token": "$GITHUB_TOKEN",
    "memory_sources": "--memory-source",
}


def cli_words(setting: Setting) -> str:
    """``max_memory_kb`` → ``--max-memory-kb``, ``model_api_key`` → its variable; with a value,
    as it is typed (``--timeout-minutes 10``)."""
    named = _NOT_A_FLAG_OF_THE_SAME_NAME.get(setting.name, "--" + setting.name.replace("_", "-"))
    return f"{named} {setting.value}" if setting.value is not None else named
