"""Finding the item ``forget`` names: deterministic, and only when it is clear."""

from __future__ import annotations

from memory_action.memory.items import as_item_line, find, holds, items, with_item, without

MEMORY = (
    "# Tests\n\n"
    "- Use pytest fixtures, not setUp.\n"
    "- Mark slow tests with pytest.mark.slow.\n\n"
    "# Network\n\n"
    "- Network calls retry with tenacity.\n"
)


def test_items_are_lines_that_hold_something() -> None:
    assert [item.text for item in items(MEMORY)] == [
        "- Use pytest fixtures, not setUp.",
        "- Mark slow tests with pytest.mark.slow.",
        "- Network calls retry with tenacity.",
    ]


def test_the_same_text_whatever_the_case_bullet_and_spacing() -> None:
    found = find(MEMORY, "network  calls retry with TENACITY.")
    assert found.item is not None and "tenacity" in found.item.text


def test_the_only_item_holding_the_words() -> None:
    found = find(MEMORY, "tenacity")
    assert found.item is not None and "tenacity" in found.item.text


def test_a_close_enough_item_with_a_typo() -> None:
    found = find(MEMORY, "Network calls retry with tenacty")
    assert found.item is not None and "tenacity" in found.item.text


def test_words_in_several_items_are_candidates_not_a_choice() -> None:
    found = find(MEMORY, "pytest")
    assert found.item is None
    assert {item.text for item in found.candidates} == {
        "- Use pytest fixtures, not setUp.",
        "- Mark slow tests with pytest.mark.slow.",
    }


def test_nothing_close_is_no_candidate() -> None:
    found = find(MEMORY, "deploy on fridays")
    assert found.item is None and found.candidates == ()


def test_an_item_by_its_number() -> None:
    found = find(MEMORY, "3")
    assert found.item is not None and "tenacity" in found.item.text
    assert find(MEMORY, "4").item is None


def test_without_removes_that_line_only() -> None:
    found = find(MEMORY, "tenacity")
    assert found.item is not None
    assert without(MEMORY, found.item) == MEMORY.replace(
        "- Network calls retry with tenacity.\n", ""
    )


def test_remembering_adds_one_list_item() -> None:
    line = as_item_line("Logs go\nthrough  structlog.")
    assert line == "- Logs go through structlog."
    assert with_item("", line) == f"{line}\n"
    assert with_item("- a", line) == f"- a\n{line}\n"
    assert holds(with_item(MEMORY, line), "logs go through structlog.")
    assert as_item_line("* starred") == "* starred"


def test_two_items_about_as_close_are_candidates() -> None:
    memory = "- Indent Makefiles with tabs.\n- Indent Makefile.am with tabs.\n"
    found = find(memory, "indent makefils with tabs")
    assert found.item is None
    assert len(found.candidates) == 2
