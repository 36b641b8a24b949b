"""Pure pieces of the cache client: request bodies (§10), response parsing, backoff, key rules."""

from __future__ import annotations

import io
import json

import httpx
import pytest
from tenacity import RetryCallState

from memory_action.gha import Workflow
from memory_action.store.base import RestoreKeys
from memory_action.store.cache_answers import (
    Answer,
    CreateAnswer,
    FinalizeAnswer,
    LookupAnswer,
    read_answer,
)
from memory_action.store.cache_blob import block_id, block_list_xml
from memory_action.store.cache_http import HttpSession, Timeouts
from memory_action.store.cache_protocol import (
    AlreadyExistsError,
    NetworkError,
    RetryClock,
    ServiceError,
    TransientError,
    WriteDeniedError,
    twirp_retrying,
)
from memory_action.store.cache_twirp import (
    compact_json,
    create_body,
    finalize_body,
    lookup_body,
    parse_twirp,
)
from memory_action.store.cache_v1 import lookup_resource
from memory_action.store.keys import keys_problem


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (create_body("k", "v"), '{"key":"k","version":"v"}'),
        (finalize_body("k", "v", 1234), '{"key":"k","size_bytes":"1234","version":"v"}'),
        (lookup_body(RestoreKeys(primary="k"), "v"), '{"key":"k","version":"v"}'),
        (
            lookup_body(RestoreKeys(primary="k", restore=("a-", "b-")), "v"),
            '{"key":"k","restore_keys":["a-","b-"],"version":"v"}',
        ),
    ],
)
def test_request_bodies_match_the_test_vectors(body: dict[str, object], expected: str) -> None:
    assert json.loads(compact_json(body)) == json.loads(expected)
    assert compact_json(body) == expected.encode()  # compact, in the JS client's field order


def test_bodies_are_utf8_like_json_stringify() -> None:
    assert compact_json(create_body("mémoire", "v")) == '{"key":"mémoire","version":"v"}'.encode()


@pytest.mark.parametrize(
    "body",
    [{"ok": True, "entry_id": 42}, {"ok": True, "entryId": "42"}, {"ok": True, "entry_id": "42"}],
)
def test_response_parsing_is_lenient(body: dict[str, object]) -> None:
    answer = FinalizeAnswer.model_validate(body)
    assert answer.ok
    assert answer.entry_id == 42


@pytest.mark.parametrize("body", [{}, {"ok": False}, {"ok": None}, {"signed_download_url": "x"}])
def test_only_ok_true_is_ok(body: dict[str, object]) -> None:
    assert not Answer.model_validate(body).ok


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"ok": "true"}, "ok: 'true' is neither true nor false"),
        ({"ok": "yes"}, "ok: 'yes' is neither true nor false"),
        ({"ok": float("nan")}, "ok: nan is neither true nor false"),
        ({"ok": 1}, "ok: 1 is neither true nor false"),
        ({"ok": True, "signedDownloadUrl": 5}, "signedDownloadUrl: 5 is not a string"),
    ],
)
def test_an_ok_neither_true_nor_false_is_a_garbled_answer_not_a_miss(
    body: dict[str, object], said: str
) -> None:
    with pytest.raises(ServiceError) as raised:
        read_answer(LookupAnswer, body, "GetCacheEntryDownloadURL")
    assert str(raised.value) == f"GetCacheEntryDownloadURL sent a garbled answer: {said}"


def test_text_fields_in_both_spellings() -> None:
    assert CreateAnswer.model_validate({"signedUploadUrl": "u"}).signed_upload_url == "u"
    assert CreateAnswer.model_validate({"signed_upload_url": "u"}).signed_upload_url == "u"
    assert CreateAnswer.model_validate({"signed_upload_url": 5}).signed_upload_url == ""
    assert FinalizeAnswer.model_validate({"entry_id": True}).entry_id is None


def _response(status: int, body: bytes, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=body, headers=headers)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (500, b'{"code":"internal","msg":"x"}', TransientError),
        (502, b'{"code":"unavailable","msg":"x"}', TransientError),
        (503, b'{"code":"unavailable","msg":"x"}', TransientError),
        (504, b'{"code":"deadline_exceeded","msg":"x"}', TransientError),
        (200, b"<html>", TransientError),
        (404, b"not json", ServiceError),  # the status decides: a 4xx is not tried again
        (502, b"Bad Gateway", TransientError),
        (409, b"Conflict", AlreadyExistsError),
        (429, b"Too Many Requests", ServiceError),
        (403, b"Forbidden", ServiceError),
        (409, b'{"code":"already_exists","msg":"exists"}', AlreadyExistsError),
        (429, b'{"code":"resource_exhausted","msg":"slow"}', ServiceError),
        (403, b'{"code":"permission_denied","msg":"cache write denied: ro"}', WriteDeniedError),
        (403, b'{"code":"permission_denied","msg":"cache read denied: no"}', ServiceError),
        (500, b'{"code":"internal","msg":"insufficient usage"}', ServiceError),
        (501, b'{"code":"unimplemented","msg":"x"}', ServiceError),
    ],
)
def test_twirp_errors_are_classified_like_the_js_client(
    status: int, body: bytes, error: type[Exception]
) -> None:
    with pytest.raises(error) as raised:
        parse_twirp(_response(status, body), "M")
    if error is ServiceError:
        assert not isinstance(raised.value, TransientError)


@pytest.mark.parametrize("body", [b"[1]", b"null", b'"ok"'])
def test_a_2xx_that_is_not_an_object_is_garbled_not_empty(body: bytes) -> None:
    with pytest.raises(ServiceError) as raised:
        parse_twirp(_response(200, body), "M")
    assert str(raised.value) == "M sent a garbled answer: not a JSON object"
    assert not isinstance(raised.value, TransientError)


def test_rate_limit_message_names_retry_after() -> None:
    with pytest.raises(ServiceError, match="resets in 17 seconds"):
        parse_twirp(_response(429, b'{"msg":"slow"}', **{"Retry-After": "17"}), "M")


def _state(attempt: int) -> RetryCallState:
    state = RetryCallState(twirp_retrying(RetryClock()), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    return state


@pytest.mark.parametrize(
    ("attempt", "rand", "expected"),
    [
        (1, 0.0, 3.0),
        (1, 0.9, 3.0),
        (2, 0.0, 4.5),
        (2, 1.0, 6.75),
        (3, 0.0, 6.75),
        (4, 0.5, 12.65625),
    ],
)
def test_js_backoff(attempt: int, rand: float, expected: float) -> None:
    retrying = twirp_retrying(RetryClock(sleep=lambda _: None, random=lambda: rand))
    assert retrying.wait(_state(attempt)) == pytest.approx(expected)


def test_network_errors_get_two_attempts_other_transients_five() -> None:
    calls: list[str] = []
    sleeps: list[float] = []
    retrying = twirp_retrying(RetryClock(sleep=sleeps.append, random=lambda: 0.0))

    def network() -> None:
        calls.append("n")
        raise NetworkError("reset")

    with pytest.raises(NetworkError):
        retrying(network)
    assert (calls, sleeps) == (["n", "n"], [3.0])


def test_block_ids_have_equal_length_and_the_list_is_in_order() -> None:
    ids = [block_id(i) for i in (0, 9, 10, 999_999)]
    assert len({len(i) for i in ids}) == 1
    xml = block_list_xml(2).decode()
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><BlockList>')
    assert xml.index(block_id(0)) < xml.index(block_id(1))


def test_v1_lookup_encodes_like_encode_uri_component() -> None:
    resource = lookup_resource(RestoreKeys(primary="mem-2", restore=("mem-", "a b/c(!)*'~")), "v")
    assert resource == "cache?keys=mem-2%2Cmem-%2Ca%20b%2Fc(!)*'~&version=v"


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        (["k"], None),
        (["k" * 512], None),
        (["k" * 513], "513 characters"),
        (["a,b"], "comma"),
        ([""], "empty"),
        (["k"] * 10, None),
        (["k"] * 11, "at most 10"),
    ],
)
def test_key_rules(keys: list[str], problem: str | None) -> None:
    found = keys_problem(keys)
    assert found is None if problem is None else problem in (found or "")


def test_signed_url_masking_covers_every_form_of_the_signature() -> None:
    out = io.StringIO()
    workflow = Workflow(env={"GITHUB_ACTIONS": "true"}, out=out)
    url = "https://acct.blob.example.test/c/b?sv=2025-01-05&sig=ab%2Bcd%2Fef%3D&se=x"
    with httpx.Client() as client:
        HttpSession(client, workflow, Timeouts()).mask_signed_url(url)
    assert {url, "ab%2Bcd%2Fef%3D", "ab+cd/ef="} <= workflow.masked_values
    assert workflow.redact(f"GET {url} failed") == "GET *** failed"
    assert workflow.redact("sig ab+cd/ef= leaked") == "sig *** leaked"
