"""A fake GitHub Actions cache service: a real HTTP server on 127.0.0.1, for tests.

It serves what ``actions-cache-protocol.md`` describes, closely enough for our client and for the
official JS client (``@actions/cache``):

- v2: the three Twirp RPCs under ``/twirp/github.actions.results.api.v1.CacheService/``;
- the blob store the signed URLs point to: Put Blob (``x-ms-blob-type: BlockBlob``), Put Block
  (``comp=block``), Put Block List (``comp=blocklist``), GET (with ``Range``/``x-ms-range``), HEAD;
- v1: ``GET cache``, ``GET caches``, ``POST caches``, ``PATCH caches/{id}``, ``POST caches/{id}``.

Semantics: entries are immutable (a second create of the same key, version and scope is a 409
``already_exists``); an entry is visible only once finalized; lookups match the key and the
version, try each key exactly, then as a prefix (newest first), scope after scope in the order
of the token's ref chain; saves land in the first ref of the chain; a read-only token gets
``{"ok": false, "message": "cache write denied: ..."}``.

Faults: ``fail(route, Fault...)`` queues faults per route; each request to the route takes the
next one (status codes, 429 with Retry-After, a hang, a reset connection, a truncated body, a body
that is not JSON, or replaced bytes). Every request is recorded in ``requests``.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import socket
import struct
import sys
import threading
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

TWIRP_PREFIX = "/twirp/github.actions.results.api.v1.CacheService/"
BLOB_PREFIX = "/devstoreaccount1/actions-cache/"
V1_PREFIX = "/v1/tenant-0123/"  # ACTIONS_CACHE_URL path; v1 URLs append _apis/artifactcache/
V1_API = V1_PREFIX + "_apis/artifactcache/"
DEFAULT_TOKEN = "fake-runtime-token-3f9c2a"
SAS_VERSION = "2025-01-05"

CREATE = "CreateCacheEntry"
FINALIZE = "FinalizeCacheEntryUpload"
LOOKUP = "GetCacheEntryDownloadURL"
BLOB_PUT = "blob.put"
BLOB_GET = "blob.get"
BLOB_HEAD = "blob.head"
V1_LOOKUP = "v1.lookup"
V1_LIST = "v1.list"
V1_RESERVE = "v1.reserve"
V1_UPLOAD = "v1.upload"
V1_COMMIT = "v1.commit"

TWIRP_FIELDS = {
    CREATE: {"key", "version"},
    FINALIZE: {"key", "size_bytes", "version"},
    LOOKUP: {"key", "restore_keys", "version"},
}
TWIRP_CODES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    409: "already_exists",
    412: "failed_precondition",
    429: "resource_exhausted",
    500: "internal",
    501: "unimplemented",
    502: "unavailable",
    503: "unavailable",
    504: "deadline_exceeded",
}
WRITE_DENIED = "cache write denied: token has no writable scopes"
READ_DENIED = "cache read denied: token has no readable scopes"


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or to) the normal answer of one request."""

    kind: str  # answer | status | hang | reset | truncate | non_json | body
    status: int = 500
    msg: str = ""
    retry_after: str | None = None
    seconds: float = 30.0
    body: bytes = b""

    @classmethod
    def answer(cls) -> Fault:
        """No fault: answer this request normally (so a queue can fault every n-th request)."""
        return cls("answer")

    @classmethod
    def http(cls, status: int, msg: str = "", retry_after: str | None = None) -> Fault:
        return cls("status", status=status, msg=msg, retry_after=retry_after)

    @classmethod
    def rate_limit(cls, retry_after: str = "60") -> Fault:
        return cls("status", status=429, msg="rate limited", retry_after=retry_after)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Say nothing for ``seconds`` (past the client's timeout), then drop the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def reset(cls) -> Fault:
        return cls("reset")

    @classmethod
    def truncate(cls) -> Fault:
        """Announce the full Content-Length, send half the body, close."""
        return cls("truncate")

    @classmethod
    def non_json(cls, status: int = 200) -> Fault:
        return cls("non_json", status=status, body=b"<html><body>Bad Gateway</body></html>")

    @classmethod
    def plain_text(cls, status: int, text: str) -> Fault:
        """An answer a proxy or load balancer might give: this status, a text/plain body."""
        return cls("non_json", status=status, body=text.encode())

    @classmethod
    def replace_body(cls, body: bytes) -> Fault:
        """Answer normally, but with these bytes (e.g. a corrupt or malicious archive)."""
        return cls("body", body=body)


@dataclass(frozen=True)
class Recorded:
    method: str
    route: str
    path: str
    query: str  # raw, as sent
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def params(self) -> dict[str, str]:
        return {name: values[0] for name, values in parse_qs(self.query).items()}


@dataclass
class Entry:
    id: int
    key: str
    version: str
    scope: str
    sequence: int
    created_at: datetime
    data: bytes | None = None
    parts: bytearray = field(default_factory=bytearray)  # v1 chunks
    blocks: dict[str, bytes] = field(default_factory=dict)  # uncommitted Put Blocks
    finalized: bool = False


@dataclass(frozen=True)
class Run:
    """What one runtime token may do: read these scopes in order, write to the first."""

    refs: tuple[str, ...]
    read_only: bool = False


@dataclass(frozen=True)
class _Signature:
    entry_id: int
    permission: str  # "r" or "w"


class FakeCacheService:
    """Start with ``with FakeCacheService(...) as service:`` (or ``start()``/``stop()``)."""

    def __init__(
        self,
        refs: Sequence[str] = ("refs/heads/main",),
        *,
        read_only: bool = False,
        token: str = DEFAULT_TOKEN,
    ) -> None:
        self.token = token
        self.runs: dict[str, Run] = {token: Run(tuple(refs), read_only)}
        self.requests: list[Recorded] = []
        self.entries: dict[int, Entry] = {}
        self.read_denied = False
        self.miss_body: dict[str, Any] = {}  # the real miss body was never captured
        self._faults: dict[str, deque[Fault]] = {}
        self._signatures: dict[str, _Signature] = {}
        self._sequence = 0
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeCacheService:
        server = _Server(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeCacheService:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def results_url(self) -> str:
        """ACTIONS_RESULTS_URL, with a path that a correct v2 client drops."""
        return f"{self.base_url}/results-receiver/"

    @property
    def cache_url(self) -> str:
        """ACTIONS_CACHE_URL (v1), ending in "/"."""
        return f"{self.base_url}{V1_PREFIX}"

    def env(self, protocol: str = "v2", token: str | None = None) -> dict[str, str]:
        """The runner variables a container action would see for this fake."""
        env = {"ACTIONS_RUNTIME_TOKEN": self.token if token is None else token}
        if protocol == "v2":
            env["ACTIONS_RESULTS_URL"] = self.results_url
        else:
            env["ACTIONS_CACHE_URL"] = self.cache_url
        return env

    # -- setup and inspection -------------------------------------------------------------------

    def add_run(self, refs: Sequence[str], *, read_only: bool = False) -> str:
        """A token for another run (another ref chain), e.g. the default branch after a merge."""
        token = f"fake-token-{secrets.token_hex(8)}"
        self.runs[token] = Run(tuple(refs), read_only)
        return token

    def fail(self, route: str, *faults: Fault) -> None:
        with self._lock:
            self._faults.setdefault(route, deque()).extend(faults)

    def clear_faults(self) -> int:
        """Drop every fault still queued (how many): requests from now on are answered normally."""
        with self._lock:
            left = sum(len(queue) for queue in self._faults.values())
            self._faults.clear()
            return left

    def pending_faults(self, route: str) -> int:
        with self._lock:
            return len(self._faults.get(route, ()))

    def seed(self, key: str, version: str, data: bytes, scope: str | None = None) -> Entry:
        """A finalized entry, as if another client had saved it."""
        with self._lock:
            entry = self._new_entry(key, version, scope or next(iter(self.runs.values())).refs[0])
            entry.data = data
            entry.finalized = True
            return entry

    def expire_signatures(self) -> None:
        """Every signed URL handed out so far now gets 403, like an expired SAS."""
        with self._lock:
            self._signatures.clear()

    def visible(self) -> list[Entry]:
        with self._lock:
            return [entry for entry in self.entries.values() if entry.finalized]

    def rest_list(self, key_prefix: str, ref: str) -> list[dict[str, Any]]:
        """``GET /repos/{o}/{r}/actions/caches`` as GitHub answers it (newest first)."""
        with self._lock:
            entries = [
                e
                for e in self.visible()
                if e.key.startswith(key_prefix) and (not ref or e.scope == ref)
            ]
        entries.sort(key=lambda e: (e.created_at, e.sequence), reverse=True)
        return [
            {
                "id": e.id,
                "ref": e.scope,
                "key": e.key,
                "version": e.version,
                "created_at": e.created_at.isoformat().replace("+00:00", "Z"),
                "last_accessed_at": e.created_at.isoformat().replace("+00:00", "Z"),
                "size_in_bytes": len(e.data or b""),
            }
            for e in entries
        ]

    def rest_delete(self, entry_id: int) -> bool:
        with self._lock:
            return self.entries.pop(entry_id, None) is not None

    def find(self, key: str) -> Entry | None:
        return next((entry for entry in self.visible() if entry.key == key), None)

    def requests_to(self, route: str) -> list[Recorded]:
        with self._lock:
            return [request for request in self.requests if request.route == route]

    # -- the service's own logic ----------------------------------------------------------------

    def _new_entry(self, key: str, version: str, scope: str) -> Entry:
        self._sequence += 1
        entry = Entry(
            id=self._sequence,
            key=key,
            version=version,
            scope=scope,
            sequence=self._sequence,
            created_at=datetime.now(UTC),
        )
        self.entries[entry.id] = entry
        return entry

    def _existing(self, key: str, version: str, scope: str) -> Entry | None:
        return next(
            (
                e
                for e in self.entries.values()
                if (e.key, e.version, e.scope) == (key, version, scope)
            ),
            None,
        )

    def match(self, run: Run, keys: Sequence[str], version: str) -> Entry | None:
        """Scope by scope; in each, every key exactly, then as a prefix (newest first)."""
        with self._lock:
            for scope in run.refs:
                candidates = [
                    e for e in self.visible() if e.scope == scope and e.version == version
                ]
                for key in keys:
                    exact = [e for e in candidates if e.key == key]
                    prefixed = [e for e in candidates if e.key.startswith(key)]
                    found = exact or prefixed
                    if found:
                        return max(found, key=lambda e: e.sequence)
        return None

    def sign(self, entry: Entry, permission: str) -> str:
        sig = base64.b64encode(secrets.token_bytes(32)).decode()  # has "=" and often "+" "/"
        with self._lock:
            self._signatures[sig] = _Signature(entry.id, permission)
        query = (
            f"sv={SAS_VERSION}&se=2099-01-01T00%3A00%3A00Z&sr=b&sp={permission}"
            f"&sig={quote(sig, safe='')}"
        )
        return f"{self.base_url}{BLOB_PREFIX}entry-{entry.id}?{query}"

    def check_signature(self, path: str, query: str, permission: str) -> Entry | None:
        values = parse_qs(query).get("sig", [])
        with self._lock:
            signature = self._signatures.get(values[0]) if values else None
            if signature is None or signature.permission != permission:
                return None
            entry = self.entries.get(signature.entry_id)
        if entry is None or path != f"{BLOB_PREFIX}entry-{entry.id}":
            return None
        return entry

    def next_fault(self, route: str) -> Fault | None:
        with self._lock:
            queue = self._faults.get(route)
            return queue.popleft() if queue else None

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)


# -- the HTTP side --------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    """Quiet when a client drops a kept-alive connection (it closes a response it did not read,
    e.g. after an error status): socketserver would print that traceback to ``sys.stderr``,
    where it would look like the action's own."""

    # Many runs connect at once in the concurrency tests: socketserver's backlog of 5 drops
    # connections, which then time out like a service that does not answer.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class _Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    head_only_length: int | None = None  # HEAD: the length a GET would send


def _json_reply(status: int, body: Mapping[str, Any], **headers: str) -> _Reply:
    return _Reply(
        status, json.dumps(body).encode(), {"Content-Type": "application/json", **headers}
    )


def _twirp_error(status: int, msg: str, code: str | None = None, **headers: str) -> _Reply:
    return _json_reply(
        status, {"code": code or TWIRP_CODES.get(status, "unknown"), "msg": msg}, **headers
    )


def _azure_error(status: int, code: str) -> _Reply:
    body = f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code></Error>'.encode()
    return _Reply(status, body, {"Content-Type": "application/xml", "x-ms-error-code": code})


def _handler_for(service: FakeCacheService) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = service

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx and node use it
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    timeout = 30
    fake: FakeCacheService

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read ``requests`` instead

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    # -- dispatch -------------------------------------------------------------------------------

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        body = self._read_body()
        route = _route(self.command, parts.path, parts.query)
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake.record(Recorded(self.command, route, parts.path, parts.query, headers, body))
        fault = self.fake.next_fault(route)
        if fault is not None and fault.kind in ("hang", "reset"):
            self._break(fault)
            return
        if fault is not None and fault.kind in ("status", "non_json"):
            self._send(_fault_reply(route, fault))
            return
        reply = self._answer(route, parts.path, parts.query, headers, body)
        if fault is not None and fault.kind == "body":
            reply.body = fault.body
        self._send(reply, truncate=fault is not None and fault.kind == "truncate")

    def _answer(
        self, route: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> _Reply:
        if route.startswith("blob."):
            return _Blob(self.fake).answer(route, path, query, headers, body)
        if route in TWIRP_FIELDS:
            return _Twirp(self.fake).answer(route, headers, body)
        if route.startswith("v1."):
            return _V1(self.fake).answer(route, path, query, headers, body)
        return _twirp_error(404, f"no route for {self.command} {path}", "bad_route")

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return b"".join(_chunks(self.rfile))
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, reply: _Reply, truncate: bool = False) -> None:
        self.send_response(reply.status)
        length = reply.head_only_length if reply.head_only_length is not None else len(reply.body)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return
        if truncate:
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(reply.body)

    def _break(self, fault: Fault) -> None:
        self.close_connection = True
        if fault.kind == "hang":
            self.fake.wait(fault.seconds)
            return
        # SO_LINGER 0: closing sends a TCP RST instead of a FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


def _chunks(stream: Any) -> Iterator[bytes]:
    while True:
        size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            stream.readline()
            return
        yield stream.read(size)
        stream.readline()


def _route(method: str, path: str, query: str) -> str:
    if path.startswith(TWIRP_PREFIX) and method == "POST":
        return path[len(TWIRP_PREFIX) :]
    if path.startswith(BLOB_PREFIX):
        return {"PUT": BLOB_PUT, "GET": BLOB_GET, "HEAD": BLOB_HEAD}.get(method, "blob.other")
    if path.startswith(V1_API):
        resource = path[len(V1_API) :]
        if resource == "cache" and method == "GET":
            return V1_LOOKUP
        if resource == "caches":
            return V1_LIST if method == "GET" else V1_RESERVE
        if re.fullmatch(r"caches/\d+", resource):
            return V1_UPLOAD if method == "PATCH" else V1_COMMIT
    return "unknown"


def _fault_reply(route: str, fault: Fault) -> _Reply:
    if fault.kind == "non_json":
        kind = "text/html" if fault.body.startswith(b"<") else "text/plain"
        return _Reply(fault.status, fault.body, {"Content-Type": kind})
    extra = {"Retry-After": fault.retry_after} if fault.retry_after else {}
    if route.startswith("blob."):
        reply = _azure_error(fault.status, "ServerBusy" if fault.status >= 500 else "Fault")
        reply.headers.update(extra)
        return reply
    if route.startswith("v1."):
        return _json_reply(fault.status, {"message": fault.msg or "fault"}, **extra)
    return _twirp_error(fault.status, fault.msg or "injected fault", **extra)


class _Twirp:
    """The three v2 RPCs."""

    def __init__(self, fake: FakeCacheService) -> None:
        self.fake = fake

    def answer(self, method: str, headers: dict[str, str], raw: bytes) -> _Reply:
        run = _run_for(self.fake, headers)
        if run is None:
            return _twirp_error(401, "invalid or missing runtime token")
        if not headers.get("content-type", "").startswith("application/json"):
            return _twirp_error(415, "expected application/json", "malformed")
        try:
            body = json.loads(raw)
        except ValueError:
            return _twirp_error(400, "the body is not JSON", "malformed")
        if not isinstance(body, dict) or set(body) - TWIRP_FIELDS[method]:
            return _twirp_error(400, f"unknown fields in {sorted(body)}", "malformed")
        return getattr(self, method)(run, body)  # type: ignore[no-any-return]

    def CreateCacheEntry(self, run: Run, body: dict[str, Any]) -> _Reply:  # noqa: N802
        if run.read_only:
            return _json_reply(200, {"ok": False, "message": WRITE_DENIED})
        key, version = str(body.get("key", "")), str(body.get("version", ""))
        if not key or len(key) > 512 or not version:
            return _twirp_error(400, "invalid key or version")
        with self.fake._lock:
            if self.fake._existing(key, version, run.refs[0]) is not None:
                return _twirp_error(
                    409, "cache entry with the same key, version, and scope already exists"
                )
            entry = self.fake._new_entry(key, version, run.refs[0])
        return _json_reply(200, {"ok": True, "signed_upload_url": self.fake.sign(entry, "w")})

    def FinalizeCacheEntryUpload(self, run: Run, body: dict[str, Any]) -> _Reply:  # noqa: N802
        key, version = str(body.get("key", "")), str(body.get("version", ""))
        with self.fake._lock:
            entry = self.fake._existing(key, version, run.refs[0])
            if entry is None or entry.finalized:
                return _twirp_error(404, "no reserved cache entry with this key and version")
            if entry.data is None:
                return _json_reply(200, {"ok": False, "message": "no blob was uploaded"})
            if str(body.get("size_bytes")) != str(len(entry.data)):
                return _twirp_error(400, f"size_bytes does not match the blob ({len(entry.data)})")
            entry.finalized = True
        return _json_reply(200, {"ok": True, "entry_id": str(entry.id)})

    def GetCacheEntryDownloadURL(self, run: Run, body: dict[str, Any]) -> _Reply:  # noqa: N802
        if self.fake.read_denied:
            return _twirp_error(403, READ_DENIED)
        keys = [str(body.get("key", "")), *[str(k) for k in body.get("restore_keys", [])]]
        entry = self.fake.match(run, keys, str(body.get("version", "")))
        if entry is None:
            return _json_reply(200, self.fake.miss_body)
        url = self.fake.sign(entry, "r")
        return _json_reply(200, {"ok": True, "signed_download_url": url, "matched_key": entry.key})


def _run_for(fake: FakeCacheService, headers: dict[str, str]) -> Run | None:
    auth = headers.get("authorization", "")
    return fake.runs.get(auth.removeprefix("Bearer ")) if auth.startswith("Bearer ") else None


class _Blob:
    """Just enough Azure Blob Storage behind the signed URLs."""

    def __init__(self, fake: FakeCacheService) -> None:
        self.fake = fake

    def answer(
        self, route: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> _Reply:
        permission = "w" if route == BLOB_PUT else "r"
        entry = self.fake.check_signature(path, query, permission)
        if entry is None:
            return _azure_error(403, "AuthenticationFailed")
        if route == BLOB_PUT:
            return self._put(entry, parse_qs(query), headers, body)
        if not entry.finalized or entry.data is None:
            return _azure_error(404, "BlobNotFound")
        return self._get(entry.data, headers, head=route == BLOB_HEAD)

    def _put(
        self, entry: Entry, params: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> _Reply:
        if entry.finalized:
            return _azure_error(409, "BlobImmutable")
        comp = params.get("comp", [""])[0]
        if comp == "block":
            entry.blocks[params.get("blockid", [""])[0]] = body
        elif comp == "blocklist":
            ids = [item.text or "" for item in ET.fromstring(body)]  # noqa: S314 - our own client
            if any(block not in entry.blocks for block in ids):
                return _azure_error(400, "InvalidBlockList")
            entry.data = b"".join(entry.blocks[block] for block in ids)
        elif headers.get("x-ms-blob-type") == "BlockBlob":
            entry.data = body
        else:
            return _azure_error(400, "MissingRequiredHeader")
        return _Reply(201, b"", _blob_headers())

    def _get(self, data: bytes, headers: dict[str, str], head: bool) -> _Reply:
        extra = {**_blob_headers(), "Content-Type": "application/octet-stream"}
        extra.update({"x-ms-blob-type": "BlockBlob", "Accept-Ranges": "bytes"})
        wanted = re.fullmatch(
            r"bytes=(\d+)-(\d*)", headers.get("x-ms-range") or headers.get("range", "")
        )
        if head:
            return _Reply(200, b"", extra, head_only_length=len(data))
        if wanted is None:
            return _Reply(200, data, extra)
        start = int(wanted[1])
        end = min(int(wanted[2]) if wanted[2] else len(data) - 1, len(data) - 1)
        extra["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        return _Reply(206, data[start : end + 1], extra)


def _blob_headers() -> dict[str, str]:
    return {
        "ETag": f'"0x{secrets.token_hex(8).upper()}"',
        "Last-Modified": datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
        "x-ms-request-id": secrets.token_hex(16),
        "x-ms-version": SAS_VERSION,
        "x-ms-request-server-encrypted": "true",
    }


class _V1:
    """The legacy REST API (``_apis/artifactcache``)."""

    def __init__(self, fake: FakeCacheService) -> None:
        self.fake = fake

    def answer(
        self, route: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> _Reply:
        run = _run_for(self.fake, headers)
        if run is None:
            return _json_reply(401, {"message": "invalid or missing runtime token"})
        params = {name: values[0] for name, values in parse_qs(query).items()}
        if route == V1_LOOKUP:
            return self._lookup(run, params)
        if route == V1_LIST:
            return self._list(run, params.get("key", ""))
        if route == V1_RESERVE:
            return self._reserve(run, json.loads(body or b"{}"))
        return self._reserved(route, int(path.rsplit("/", 1)[1]), headers, body)

    def _reserved(self, route: str, cache_id: int, headers: dict[str, str], body: bytes) -> _Reply:
        with self.fake._lock:
            entry = self.fake.entries.get(cache_id)
            if entry is None or entry.finalized:
                return _json_reply(404, {"message": f"cache {cache_id} is not reserved"})
            if route == V1_UPLOAD:
                return self._upload(entry, headers.get("content-range", ""), body)
            return self._commit(entry, json.loads(body or b"{}"))

    def _describe(self, entry: Entry) -> dict[str, Any]:
        return {
            "cacheKey": entry.key,
            "scope": entry.scope,
            "cacheVersion": entry.version,
            "creationTime": entry.created_at.isoformat(),
            "archiveLocation": self.fake.sign(entry, "r"),
        }

    def _lookup(self, run: Run, params: dict[str, str]) -> _Reply:
        if self.fake.read_denied:
            return _json_reply(403, {"message": READ_DENIED})
        entry = self.fake.match(run, params.get("keys", "").split(","), params.get("version", ""))
        if entry is None:
            return _Reply(204)
        return _json_reply(200, self._describe(entry))

    def _list(self, run: Run, key: str) -> _Reply:
        found = [e for e in self.fake.visible() if e.key == key and e.scope in run.refs]
        caches = [self._describe(entry) for entry in found]
        return _json_reply(200, {"totalCount": len(caches), "artifactCaches": caches})

    def _reserve(self, run: Run, body: dict[str, Any]) -> _Reply:
        if run.read_only:
            return _json_reply(403, {"message": WRITE_DENIED})
        key, version = str(body.get("key", "")), str(body.get("version", ""))
        with self.fake._lock:
            if self.fake._existing(key, version, run.refs[0]) is not None:
                return _json_reply(409, {"message": f"Cache already exists. Key: {key}"})
            entry = self.fake._new_entry(key, version, run.refs[0])
        return _json_reply(201, {"cacheId": entry.id})

    def _upload(self, entry: Entry, content_range: str, body: bytes) -> _Reply:
        span = re.fullmatch(r"bytes (\d+)-(\d+)/\*", content_range)
        if span is None or int(span[2]) - int(span[1]) + 1 != len(body):
            return _json_reply(400, {"message": f"bad Content-Range {content_range!r}"})
        start = int(span[1])
        if len(entry.parts) < start + len(body):
            entry.parts.extend(b"\0" * (start + len(body) - len(entry.parts)))
        entry.parts[start : start + len(body)] = body
        return _Reply(204)

    def _commit(self, entry: Entry, body: dict[str, Any]) -> _Reply:
        if body.get("size") != len(entry.parts):
            return _json_reply(400, {"message": f"size {body.get('size')} != {len(entry.parts)}"})
        entry.data = bytes(entry.parts)
        entry.finalized = True
        return _Reply(204)
