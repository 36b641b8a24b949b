"""Numbers from untrusted text: ASCII digits only, everywhere one is read."""

from __future__ import annotations

import pytest

from memory_action.errors import InputError
from memory_action.memory.items import find
from memory_action.run.settings import parse_int
from memory_action.safety.numbers import ascii_int
from memory_action.store.cache_answers import FinalizeAnswer

NOT_ASCII = ["\u00b2", "\u0663", "\uff12", "\u2460", "1\u00b2", "1_000", " 1", "+1", "", "1" * 5000]


@pytest.mark.parametrize("text", NOT_ASCII)
def test_anything_but_ascii_digits_is_no_number(text: str) -> None:
    assert ascii_int(text) is None


def test_ascii_digits_are_a_number() -> None:
    assert ascii_int("0042") == 42
    assert ascii_int("-7", signed=True) == -7
    assert ascii_int("-7") is None
    assert ascii_int("1" * 20) is None  # past an int64's digits


@pytest.mark.parametrize("text", NOT_ASCII)
def test_forget_by_a_number_not_in_ascii_is_read_as_words(text: str) -> None:
    memory = "- one\n- two\n"
    found = find(memory, text)
    assert found.item is None


def test_forget_by_an_ascii_number_names_the_item() -> None:
    found = find("- one\n- two\n", "2")
    assert found.item is not None and found.item.text == "- two"


@pytest.mark.parametrize("text", ["\u00b2", "\u0663", "-\u00b2"])
def test_a_cache_services_count_in_other_digits_is_no_count(text: str) -> None:
    assert FinalizeAnswer.model_validate({"entry_id": text}).entry_id is None


@pytest.mark.parametrize("text", ["\u00b2", "\u0663"])
def test_an_input_in_other_digits_is_refused_in_the_inputs_words(text: str) -> None:
    with pytest.raises(InputError, match="max_memory_kb"):
        parse_int("max_memory_kb", text, (1, 100))
