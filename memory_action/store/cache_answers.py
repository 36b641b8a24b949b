"""The cache service's JSON answers, parsed into models as leniently as the clients read them.

Twirp answers (v2) come with proto (snake_case) or lowerCamel field names, the proto name first
when both are there; an int64 comes as a number or a string of ASCII digits. A field of the
wrong type reads as absent, and what is missing decides later (no URL, not ``"ok": true``);
except where a wrong type would read as "no memory saved": an ``ok`` that is neither true nor
false (``"yes"``, ``NaN``), a lookup's URL or key that is no string. Such an answer is garbled,
and ``read_answer`` makes it cache trouble (a warning, and no save over memory not read), never
a miss. The v1 answers are read by the same rules.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
)

from memory_action.safety.numbers import ascii_int
from memory_action.safety.untrusted_json import first_error, location
from memory_action.store.cache_protocol import ServiceError

AnswerT = TypeVar("AnswerT", bound=BaseModel)


def camel(name: str) -> str:
    """The lowerCamel JSON name of a proto field name."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _either_spelling(name: str) -> AliasChoices:
    return AliasChoices(name, camel(name))


def as_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def as_int64(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return ascii_int(value.strip(), signed=True)
    return None


def as_ok(value: object) -> bool:
    """JSON ``true`` or ``false`` (``null``: false); ``"true"``, ``1`` or ``NaN`` garble the
    answer: a service that says neither may have memory it failed to name."""
    if value is None or isinstance(value, bool):
        return value is True
    raise ValueError(f"{_shown(value)} is neither true nor false")


def as_text_or_garbled(value: object) -> str:
    """A string (``null``: empty); any other type garbles the answer."""
    if value is None or isinstance(value, str):
        return value or ""
    raise ValueError(f"{_shown(value)} is not a string")


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else f"{shown[:37]}..."


def as_shown(value: object) -> str:
    """Any value as it is shown in an error message (an error body's ``msg`` and ``code``)."""
    return str(value)


def as_shown_if_set(value: object) -> str:
    return str(value or "")


Text = Annotated[str, PlainValidator(as_text)]
Int64 = Annotated[int | None, PlainValidator(as_int64)]
Ok = Annotated[bool, PlainValidator(as_ok)]
StrictText = Annotated[str, PlainValidator(as_text_or_garbled)]
Shown = Annotated[str, PlainValidator(as_shown)]

WIRE = ConfigDict(
    frozen=True, alias_generator=AliasGenerator(validation_alias=_either_spelling), extra="ignore"
)


class Answer(BaseModel):
    """A Twirp answer: ``"ok": true`` is ok, false or absent is not, anything else is garbled."""

    model_config = WIRE

    ok: Ok = False


class LookupAnswer(Answer):
    """``GetCacheEntryDownloadURL``."""

    signed_download_url: StrictText = ""
    matched_key: StrictText = ""


class CreateAnswer(Answer):
    """``CreateCacheEntry``."""

    signed_upload_url: Text = ""
    message: Text = ""


class FinalizeAnswer(Answer):
    """``FinalizeCacheEntryUpload``."""

    entry_id: Int64 = None
    message: Text = ""


class TwirpErrorBody(BaseModel):
    """A Twirp error's body: its ``code`` and ``msg`` under these names only."""

    model_config = WIRE

    code: Shown = Field(default="", validation_alias="code")
    msg: Shown = Field(default="", validation_alias="msg")


class V1ErrorBody(BaseModel):
    """A v1 error's body: ``message``, else the .NET spelling ``Message``."""

    model_config = WIRE

    message: Text = ""
    dotnet_message: Annotated[str, PlainValidator(as_shown_if_set)] = Field(
        default="", validation_alias="Message"
    )

    def text(self) -> str:
        return self.message or self.dotnet_message


class V1Lookup(BaseModel):
    """``GET cache``: where the archive is and the key it matched."""

    model_config = WIRE

    archive_location: StrictText = ""
    cache_key: StrictText = ""


class V1Reservation(BaseModel):
    """``POST caches``: the reserved entry's id."""

    model_config = WIRE

    cache_id: Int64 = None


def read_answer(model: type[AnswerT], body: dict[str, Any], what: str) -> AnswerT:
    """``body`` as ``model``; a garbled answer is a ``ServiceError`` that says what is wrong."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        error = first_error(exc)
        cause = error.get("ctx", {}).get("error")
        problem = str(cause) if isinstance(cause, ValueError) else error["msg"]
        field = location(error, "the answer")
        raise ServiceError(f"{what} sent a garbled answer: {field}: {problem}") from None


def object_or_empty(body: object) -> dict[str, Any]:
    """A JSON body that is not an object reads as an empty one."""
    return body if isinstance(body, dict) else {}
