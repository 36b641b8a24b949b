"""The cache service's JSON answers, parsed into models as leniently as the clients read them.

Twirp answers (v2) come with proto (snake_case) or lowerCamel field names, the proto name first
when both are there; an int64 comes as a number or a string of ASCII digits. A field of the
wrong type reads as absent, so no answer fails to parse: what is missing decides later (no URL,
not ``"ok": true``). The v1 answers are read by the same rules.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict, Field, PlainValidator

from memory_action.safety.numbers import ascii_int


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
    """Only JSON ``true`` is ok (not ``"true"``, not ``1``)."""
    return value is True


def as_shown(value: object) -> str:
    """Any value as it is shown in an error message (an error body's ``msg`` and ``code``)."""
    return str(value)


def as_shown_if_set(value: object) -> str:
    return str(value or "")


Text = Annotated[str, PlainValidator(as_text)]
Int64 = Annotated[int | None, PlainValidator(as_int64)]
Ok = Annotated[bool, PlainValidator(as_ok)]
Shown = Annotated[str, PlainValidator(as_shown)]

WIRE = ConfigDict(
    frozen=True, alias_generator=AliasGenerator(validation_alias=_either_spelling), extra="ignore"
)


class Answer(BaseModel):
    """A Twirp answer: anything without ``"ok": true`` is not ok."""

    model_config = WIRE

    ok: Ok = False


class LookupAnswer(Answer):
    """``GetCacheEntryDownloadURL``."""

    signed_download_url: Text = ""
    matched_key: Text = ""


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

    archive_location: Text = ""
    cache_key: Text = ""


class V1Reservation(BaseModel):
    """``POST caches``: the reserved entry's id."""

    model_config = WIRE

    cache_id: Int64 = None


def object_or_empty(body: object) -> dict[str, Any]:
    """A JSON body that is not an object reads as an empty one."""
    return body if isinstance(body, dict) else {}
