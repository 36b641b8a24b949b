"""One message, two wordings: settings named as the action's inputs, or as the CLI's flags and
variables (``errors.Setting``, ``local.words.cli_words``)."""

from __future__ import annotations

import pytest

from memory_action.agent.runner import readable_duration
from memory_action.errors import InputError, Setting, input_words, render
from memory_action.local.words import cli_words
from memory_action.run.settings import parse_settings


def test_a_bad_value_is_an_input_in_the_action_and_a_flag_at_the_terminal() -> None:
    with pytest.raises(InputError) as caught:
        parse_settings({"INPUT_TIMEOUT_MINUTES": "soon"})

    assert str(caught.value).startswith("Input 'timeout_minutes' has the invalid value 'soon'")
    assert caught.value.in_words(cli_words).startswith(
        "--timeout-minutes has the invalid value 'soon'"
    )


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("max_memory_kb", "--max-memory-kb"),
        ("max_input_tokens", "--max-input-tokens"),
        ("memory_sources", "--memory-source"),
        ("model_api_key", "$MEMORY_AGENT_MODEL_API_KEY"),
    ],
)
def test_the_cli_names_each_setting_as_it_takes_it(name: str, words: str) -> None:
    assert cli_words(Setting(name=name)) == words
    assert cli_words(Setting(name=name, lead=True)) == words


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.4, "0 s"), (59.9, "1 min"), (59.36, "59 s"), (90, "1 min 30 s")]
)
def test_durations_read_as_people_write_them(seconds: float, shown: str) -> None:
    assert readable_duration(seconds) == shown


def test_a_setting_with_its_value_reads_as_each_interface_takes_it() -> None:
    """The model-limits line names the time each request may take by its setting: as the
    workflow's ``with:`` gives it in the action, as typed at the terminal in the CLI."""
    minutes = Setting(name="timeout_minutes", value="10")
    assert input_words(minutes) == "timeout_minutes: 10"
    assert cli_words(minutes) == "--timeout-minutes 10"
    words = ("each request may take up to 600 s (", minutes, ").")
    assert render(words) == "each request may take up to 600 s (timeout_minutes: 10)."
    assert render(words, cli_words) == "each request may take up to 600 s (--timeout-minutes 10)."
