"""Each text is scanned for secrets once per run (``scrub.scan_once``), and only within it."""

from __future__ import annotations

import contextvars
import json
import threading

import pytest

from memory_action.safety import outgoing, scrub
from memory_action.safety.scrub import ALL_LAYERS, Layer, ScanCache, find_secrets, scan_once

SECRET = "ghp_vkIJ7EnUazjrRBVLiIspywBVicoMs10U0ro2"
MEMORY = "# Lessons\n\n" + "- Retry the flaky upload step once.\n" * 40 + f"- token {SECRET}\n"


def key(text: str, masked: tuple[str, ...] = ()) -> bytes:
    return ScanCache.key(text, masked, ALL_LAYERS)


def test_a_text_is_scanned_once_in_a_run_and_each_caller_gets_its_own_list() -> None:
    with scan_once() as cache:
        first = find_secrets(MEMORY)
        first.clear()
        second = find_secrets(MEMORY)

    assert [f.kind for f in second] == ["GitHub token"]
    assert cache.scanned[key(MEMORY)] == 1
    assert cache.asked[key(MEMORY)] == 2


def test_masked_values_and_layers_are_part_of_what_is_cached() -> None:
    masked = ("Retry the flaky",)
    with scan_once() as cache:
        plain = find_secrets(MEMORY)
        with_masked = find_secrets(MEMORY, masked)
        formats_only = find_secrets(MEMORY, layers={Layer.FORMATS})

    assert len(with_masked) > len(plain) == len(formats_only) == 1
    assert sum(cache.scanned.values()) == 3


def test_nothing_is_cached_outside_a_run_and_nothing_outlives_it() -> None:
    with scan_once() as cache:
        find_secrets(MEMORY)
    find_secrets(MEMORY)
    with scan_once() as next_run:
        find_secrets(MEMORY)

    assert cache.asked[key(MEMORY)] == 1, "the call after the run did not use its cache"
    assert next_run is not cache
    assert next_run.scanned[key(MEMORY)] == 1, "a new run scans again"


def test_a_block_inside_a_run_shares_the_run_cache() -> None:
    with scan_once() as outer:
        find_secrets(MEMORY)
        with scan_once() as inner:
            find_secrets(MEMORY)

    assert inner is outer
    assert outer.scanned[key(MEMORY)] == 1


def test_the_cache_is_bounded_and_forgets_the_least_recently_used() -> None:
    texts = [f"{MEMORY}- note {n}\n" for n in range(ScanCache.MAX_ENTRIES + 1)]
    with scan_once() as cache:
        for text in texts:
            find_secrets(text)
        find_secrets(texts[-1])  # still kept
        find_secrets(texts[0])  # forgotten: scanned again

    assert cache.scanned[key(texts[-1])] == 1
    assert cache.scanned[key(texts[0])] == 2


def test_short_texts_are_scanned_every_time_and_still_found() -> None:
    line = f"token {SECRET}"
    with scan_once() as cache:
        found = [find_secrets(line) for _ in range(3)]

    assert all(f[0].kind == "GitHub token" for f in found)
    assert len(line) < ScanCache.MIN_LENGTH
    assert not cache.asked


def test_threads_started_in_the_run_context_share_the_cache() -> None:
    with scan_once() as cache:
        find_secrets(MEMORY)
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(find_secrets, MEMORY))
        worker.start()
        worker.join()

    assert cache.asked[key(MEMORY)] == 2
    assert cache.scanned[key(MEMORY)] == 1


def test_a_json_document_scans_each_distinct_string_once_and_each_masked_value_s_forms_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Provenance repeats its keys and values thousands of times: each distinct string is
    scanned once, and the forms of each masked value are worked out once in the run."""
    masked = ("s3cr3t-value-of-the-run", "an0ther-masked-value")
    records = [
        {"line": "- Retry once.", "by": "s3cr3t-value-of-the-run", "n": n} for n in range(50)
    ]
    scanned: list[str] = []
    formed: list[str] = []
    scan, forms = outgoing.redact, scrub.masked_forms
    monkeypatch.setattr(outgoing, "redact", lambda t, m: scanned.append(t) or scan(t, m))
    monkeypatch.setattr(scrub, "masked_forms", lambda v: formed.append(v) or forms(v))

    with scan_once():
        saved = outgoing.gate(json.dumps({"records": records}), masked, form=outgoing.Form.JSON)

    assert "s3cr3t" not in saved.text and saved.text.count("[REDACTED") == 50
    assert sorted(scanned) == sorted(set(scanned))  # "line", "by", "n", "records", 2 values
    assert len(scanned) == 6
    assert sorted(formed) == sorted(masked)


def test_a_long_text_is_rendered_as_a_reader_sees_it_once_in_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = MEMORY + "- Split `ghp_vkIJ7EnUazjrRBVLiIspy`wBVicoMs10U0ro2 across a code span.\n"
    rendered: list[str] = []
    view = scrub.reader_view
    monkeypatch.setattr(scrub, "reader_view", lambda t: rendered.append(t) or view(t))

    with scan_once():
        first = scrub.redact(memory)
        second = scrub.redact(memory)

    assert first == second and len(first[1]) == 2
    assert len(rendered) == 1
