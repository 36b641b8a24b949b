"""The scrubber against the independent corpus (``tests/fixtures/secrets/``): every planted secret
is found, redacted and refused in memory edits; at most 1% of the benign lines are flagged, and
at most 1 in 10,000 lines of memory-style text."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from memory_action.memory.sources import MemoryFiles
from memory_action.memory.tools import make_memory_tools
from memory_action.safety.scrub import (
    ALL_LAYERS,
    Layer,
    find_secrets,
    redact,
    replace_findings,
)
from tests.fakes.secrets_corpus import (
    BENIGN,
    MASKED_LEAKS,
    MASKED_VALUES,
    MAX_FLAGGED_PER_LINE,
    MEMORY_TEXT,
    PLANTED,
    Planted,
    is_caught,
    survivors,
)

WRITABLE = ".agent-memory/AGENTS.md"
MEMORY = "# Lessons\n\n- one\n- two\n"


def planted_id(planted: Planted) -> str:
    return planted.family.replace(" ", "_")


def test_the_corpus_is_large_and_sourced() -> None:
    assert len({p.family for p in PLANTED}) == len(PLANTED) >= 120
    assert all(p.source.startswith("https://") for p in PLANTED), "each format names its docs"
    assert {leak.source for leak in MASKED_LEAKS} == set(MASKED_VALUES)
    assert len(BENIGN) >= 100
    assert len(MEMORY_TEXT) >= 2000
    assert len(MASKED_LEAKS) >= 30


@pytest.mark.parametrize("planted", PLANTED, ids=planted_id)
def test_every_planted_secret_is_found_and_redacted(planted: Planted) -> None:
    redacted, findings = redact(planted.text, MASKED_VALUES)

    assert findings, "nothing found"
    assert survivors(redacted, planted) == []
    assert find_secrets(redacted, MASKED_VALUES) == [], "redacting twice changes nothing"


@pytest.mark.parametrize("planted", PLANTED, ids=planted_id)
def test_every_planted_secret_is_refused_in_a_memory_edit(tmp_path: Path, planted: Planted) -> None:
    memory = tmp_path / WRITABLE
    memory.parent.mkdir(parents=True)
    memory.write_text(MEMORY, encoding="utf-8")
    files = MemoryFiles(
        workspace=tmp_path,
        read_only=(),
        writable=PurePosixPath(WRITABLE),
        max_bytes=64 * 1024,
        masked=MASKED_VALUES,
    )
    edit = {tool.name: tool for tool in make_memory_tools(files)}["edit_file"]

    message = edit.invoke(
        {"file_path": WRITABLE, "old_string": "- two\n", "new_string": f"- two\n{planted.text}\n"}
    )

    assert message.startswith("Refused: the new text contains what looks like ")
    line = 5 + planted.text[: planted.text.index(planted.secrets[0])].count("\n")
    assert f"line {line}: `" in message, "the line is named, so a false positive can be rephrased"
    assert survivors(message, planted) == [], "the refusal never repeats the secret"
    assert memory.read_text(encoding="utf-8") == MEMORY


@pytest.mark.parametrize("leak", MASKED_LEAKS, ids=planted_id)
def test_masked_values_are_found_in_every_encoding(leak: Planted) -> None:
    redacted, findings = redact(leak.text, [leak.source])

    assert findings
    assert survivors(redacted, leak) == []


def test_at_most_one_percent_of_the_benign_lines_is_flagged() -> None:
    flagged = [line for line in BENIGN if find_secrets(line, MASKED_VALUES)]

    assert len(flagged) <= len(BENIGN) // 100, f"flagged: {flagged}"
    text = "\n".join(BENIGN)
    assert len(redact(text, MASKED_VALUES)[1]) == len(flagged), "the lines are no worse together"


def test_memory_style_text_is_flagged_at_most_once_in_ten_thousand_lines() -> None:
    flagged = [line for line in MEMORY_TEXT if find_secrets(line, MASKED_VALUES)]

    assert len(flagged) <= len(MEMORY_TEXT) * MAX_FLAGGED_PER_LINE, f"flagged: {flagged[:20]}"


def caught_by(layers: frozenset[Layer], corpus: list[Planted]) -> int:
    return sum(is_caught(lambda text: redact_with(text, layers), planted) for planted in corpus)


def redact_with(text: str, layers: frozenset[Layer]) -> str:
    return replace_findings(text, find_secrets(text, MASKED_VALUES, layers=layers))[0]


def test_each_layer_adds_what_it_is_for(capsys: pytest.CaptureFixture[str]) -> None:
    formats = frozenset({Layer.FORMATS})
    context = formats | {Layer.CONTEXT}
    rows = []
    for name, layers in (("formats", formats), ("+ context", context), ("+ masked", ALL_LAYERS)):
        secrets = caught_by(layers, PLANTED)
        masked = caught_by(layers, MASKED_LEAKS)
        benign = sum(bool(find_secrets(line, MASKED_VALUES, layers=layers)) for line in BENIGN)
        rows.append((secrets, masked, benign))
        with capsys.disabled():
            print(
                f"\n{name:<10} secrets {secrets}/{len(PLANTED)}  masked {masked}/"
                f"{len(MASKED_LEAKS)}  benign flagged {benign}/{len(BENIGN)}",
                end="",
            )

    (formats_only, _, _), (with_context, masked_before, _), (everything, masked_after, _) = rows
    assert formats_only < with_context == everything == len(PLANTED)
    assert masked_before < masked_after == len(MASKED_LEAKS)
