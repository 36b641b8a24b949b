"""Untrusted JSON of any depth is refused with one line before ``json.loads`` recurses."""

from __future__ import annotations

import json

import pytest

from memory_action.safety.untrusted_json import (
    MAX_DEPTH,
    UntrustedJsonError,
    loads,
    nesting_depth,
)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b"1", 0),
        (b"[]", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["]]]]", "[[[["]', 1),  # brackets inside strings do not count
        (b'["\\"[[[", "\\\\", ["x"]]', 2),  # nor after an escaped quote; "\\\\" ends its string
        (b"]]][[", 2),  # stray closers never go below zero
    ],
)
def test_the_depth_counts_brackets_outside_strings(text: bytes, depth: int) -> None:
    assert nesting_depth(text) == depth


@pytest.mark.parametrize(
    "deep", ["[" * 20_000 + "]" * 20_000, '{"a":' * 20_000 + "1" + "}" * 20_000]
)
def test_json_nested_20000_deep_is_refused_with_one_line(deep: str) -> None:
    with pytest.raises(RecursionError):
        json.loads(deep)  # why the module exists
    with pytest.raises(UntrustedJsonError) as raised:
        loads(deep)
    assert str(raised.value) == f"JSON nested deeper than {MAX_DEPTH} levels is refused"
    assert isinstance(raised.value, ValueError)  # callers' "not valid JSON" covers it


def test_json_as_deep_as_the_limit_is_read() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(text) == json.loads(text)
    with pytest.raises(UntrustedJsonError):
        loads("[" + text + "]")


def test_text_bytes_and_options_are_read_as_json_loads_reads_them() -> None:
    assert loads('{"é": ["\\u00e9", 1.5]}') == {"é": ["é", 1.5]}
    assert loads(b'{"a": 1}') == {"a": 1}
    assert loads("[1.5]", parse_float=str) == ["1.5"]
    with pytest.raises(ValueError):
        loads("{not json")
