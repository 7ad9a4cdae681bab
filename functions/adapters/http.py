"""Everything HTTP the direct and relay transports share: the client, one bounded exchange (one deadline for
it all, a cap on the decoded body, bounded JSON nesting), a connection pool per origin, and reading an answer.
The bounds and why they hold: docs/design.md, "Lookup flow" ("Bounded upstreams").

httpx's timeouts apply to each socket operation, so the sockets here are only ever given the time left to the
exchange's deadline (`_DeadlineBackend`): at the deadline the blocked read fails on the caller's own thread.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpcore
import httpx

from functions.core import MAX_BODY_BYTES, Reason, RouteFailure

PER_HOST_LIMITS = httpx.Limits(max_connections=16, max_keepalive_connections=4, keepalive_expiry=30)
ACCEPT_ENCODING = "gzip, deflate"
"""The content-codings `exchange` decodes (zlib window bits for each below); any other is refused."""
_WINDOW_BITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
MAX_JSON_DEPTH = 64
"""Arrays and objects nested deeper than this are not a retailer's or a relay's answer."""

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("exchange_deadline", default=None)


OK_ONLY = frozenset({200})


@dataclass(frozen=True, slots=True)
class Answer:
    """Status and headers of a response, and its decoded body when its status was one to read (otherwise
    empty)."""

    status: int
    headers: httpx.Headers
    body: bytes


def exchange(
    client: httpx.Client,
    request: httpx.Request,
    *,
    timeout_ms: int,
    max_bytes: int = MAX_BODY_BYTES,
    body_statuses: frozenset[int] = OK_ONLY,
) -> Answer:
    """Sends `request` and reads a `body_statuses` (200) body within `timeout_ms` in total, never more than
    `max_bytes`.

    Raises `RouteFailure` with TIMEOUT, NETWORK_ERROR, RESPONSE_TOO_LARGE or INVALID_RESPONSE (a content
    coding that is stacked, unknown or corrupt). Bodies of other answers are not read: they are often large
    HTML pages, and few callers need them.
    """
    timeout_s = max(timeout_ms, 1) / 1000
    deadline = time.monotonic() + timeout_s
    request.extensions["timeout"] = httpx.Timeout(timeout_s).as_dict()
    token = _deadline.set(deadline)
    try:
        response = client.send(request, stream=True, follow_redirects=False)
        try:
            status = response.status_code
            if status not in body_statuses:
                return Answer(status, response.headers, b"")
            return Answer(status, response.headers, _read_body(response, deadline, max_bytes))
        finally:
            response.close()  # a body not read to its end closes the connection
    except httpx.TimeoutException:
        raise RouteFailure(Reason.TIMEOUT) from None
    except httpx.HTTPError:  # refused, reset, or not speaking HTTP/1.1 as h11 understands it
        raise RouteFailure(Reason.NETWORK_ERROR) from None
    finally:
        _deadline.reset(token)


def _read_body(response: httpx.Response, deadline: float, max_bytes: int) -> bytes:
    decoder = _Decoder(response.headers)
    if _declared_length(response.headers) > max_bytes:
        raise RouteFailure(Reason.RESPONSE_TOO_LARGE)
    stream = response.stream  # the bytes as received: httpx would decode each chunk whole, without a cap
    if not isinstance(stream, httpx.SyncByteStream):
        raise TypeError("exchange needs a synchronous client")
    received = 0
    body = bytearray()
    for chunk in stream:
        if time.monotonic() > deadline:  # sockets end at the deadline; this also catches a test transport
            raise RouteFailure(Reason.TIMEOUT)
        received += len(chunk)
        body += decoder.decode(chunk, room=max_bytes - len(body))
        if received > max_bytes or len(body) > max_bytes:
            raise RouteFailure(Reason.RESPONSE_TOO_LARGE)
    decoder.end()
    return bytes(body)


class _Decoder:
    """Undoes a body's content-coding, if any, never producing more than it is asked for."""

    def __init__(self, headers: httpx.Headers) -> None:
        named = (value.strip().lower() for value in headers.get_list("content-encoding", split_commas=True))
        codings = [coding for coding in named if coding not in ("", "identity")]
        if len(codings) > 1 or (codings and codings[0] not in _WINDOW_BITS):
            raise RouteFailure(Reason.INVALID_RESPONSE)  # stacked codings multiply a bomb's ratio
        self._zlib = zlib.decompressobj(_WINDOW_BITS[codings[0]]) if codings else None

    def decode(self, raw: bytes, *, room: int) -> bytes:
        """`raw` decoded, but at most `room + 1` bytes of it: one more than `room` says the body is too large.

        Input left over at that point stays in the decompressor and is dropped with it; bytes after the end of
        the coded body are ignored (as httpx and browsers do).
        """
        if self._zlib is None:
            return raw
        try:
            return self._zlib.decompress(raw, room + 1)
        except zlib.error:
            raise RouteFailure(Reason.INVALID_RESPONSE) from None

    def end(self) -> None:
        if self._zlib is not None and not self._zlib.eof:
            raise RouteFailure(Reason.INVALID_RESPONSE)  # the coded body was cut short


def _declared_length(headers: httpx.Headers) -> int:
    declared = headers.get("content-length", "")
    return int(declared) if re.fullmatch(r"[0-9]{1,20}", declared) else 0


def reason_for_status(status: int) -> Reason:
    """The fixed reason code for a non-200 status that says the route (or the relay) does not work."""
    if status == 401:
        return Reason.HTTP_401
    if status == 403:
        return Reason.HTTP_403
    if status == 429:
        return Reason.HTTP_429
    if 500 <= status <= 599:
        return Reason.HTTP_5XX
    return Reason.HTTP_ERROR  # redirects and every other status


def decode_json(body: bytes) -> object:
    """The decoded JSON body, made valid to serve again: a lone UTF-16 surrogate in any string or name (a
    backend that cut a name mid-emoji) becomes U+FFFD. An HTML page, anything that is not JSON, JSON nested
    deeper than `MAX_JSON_DEPTH`, or a number no JSON answer can carry (`NaN`, `Infinity`, `1e999`) raises
    INVALID_RESPONSE."""
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html")):
        raise RouteFailure(Reason.INVALID_RESPONSE)
    try:
        decoded: object = json.loads(body, parse_float=_finite, parse_constant=_not_a_number)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, and too deep for the parser
        raise RouteFailure(Reason.INVALID_RESPONSE) from None
    if not _nested_at_most(decoded, MAX_JSON_DEPTH):
        raise RouteFailure(Reason.INVALID_RESPONSE)
    return _without_surrogates(decoded) if _may_hold_surrogates(body) else decoded


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # `1e999`: serialized again it would be `Infinity`, which is not JSON
        raise ValueError("not a finite number")
    return number


def _not_a_number(text: str) -> object:
    raise ValueError(f"{text} is not JSON")


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_UTF8 = re.compile(rb"\xed[\xa0-\xbf]")
"""json.loads keeps such an escape, or such bytes, as a lone surrogate when no other half follows: no UTF-8
answer can carry one, so serializing it would fail."""


def _may_hold_surrogates(body: bytes) -> bool:
    """False when no string of `body` can hold a lone surrogate (two scans of the bytes: most answers are
    spared the walk)."""
    if json.detect_encoding(body) not in ("utf-8", "utf-8-sig"):
        return True  # UTF-16 or UTF-32: rare enough to walk always
    return bool(_SURROGATE_ESCAPE.search(body) or _SURROGATE_UTF8.search(body))


def _without_surrogates(value: object) -> object:
    """`value` with every lone surrogate of its strings and names replaced by U+FFFD (its nesting is already
    bounded). Two names made alike keep the last value, as duplicate names in JSON do."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", name): _without_surrogates(item) for name, item in value.items()}
    return value


def _nested_at_most(value: object, depth: int) -> bool:
    """True when `value` nests arrays and objects at most `depth` deep; walked by level, not by recursion."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(depth):
        level = [
            child
            for container in level
            for child in (container.values() if isinstance(container, dict) else container)
            if isinstance(child, dict | list)
        ]
        if not level:
            return True
    return not level


# --- connection pools --------------------------------------------------------------------------------


def new_http_client(transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client that keeps no cookies, follows no redirects, retries nothing, ignores proxy/netrc settings,
    and sends no header of its own but `Accept-Encoding` (`transport` lets tests and the sandbox redirect it).
    """
    no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))  # accepts and returns none
    client = httpx.Client(
        transport=transport or PerHostTransport(),
        cookies=no_cookies,
        follow_redirects=False,
        trust_env=False,
    )
    # httpx's defaults announce the client library (`User-Agent: python-httpx/…`, commonly blocked) and add
    # `Accept: */*`: a request carries only the headers its spec or the relay protocol gives it.
    for name in ("User-Agent", "Accept", "Connection"):
        del client.headers[name]
    client.headers["Accept-Encoding"] = ACCEPT_ENCODING
    return client


class PerHostTransport(httpx.BaseTransport):
    """One connection pool per origin (scheme, host, port), each with `PER_HOST_LIMITS`: calls to a slow
    host can take only that host's connections, never another host's.

    `wrap` puts a transport in front of each origin's pool (the sandbox sends every origin to its simulator
    this way, through pools as separate as in production).
    """

    def __init__(
        self, wrap: Callable[[httpx.BaseTransport], httpx.BaseTransport] = lambda pool: pool
    ) -> None:
        self._wrap = wrap
        self._pools: dict[tuple[bytes, bytes, int | None], httpx.BaseTransport] = {}
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        origin = (request.url.raw_scheme, request.url.raw_host, request.url.port)
        with self._lock:
            pool = self._pools.get(origin)
            if pool is None:
                pool = self._pools[origin] = self._wrap(_DeadlineTransport())
        return pool.handle_request(request)

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context (loading the CA bundle takes a while) shared by every pool."""
    return httpx.create_ssl_context()


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (request/response conversion, error mapping) over deadline-bound sockets."""

    def __init__(self) -> None:
        super().__init__(verify=_tls_context(), retries=0)
        # httpx takes no network backend, so its pool is rebuilt with ours (same settings, no retries).
        self._pool = httpcore.ConnectionPool(
            ssl_context=_tls_context(),
            max_connections=PER_HOST_LIMITS.max_connections,
            max_keepalive_connections=PER_HOST_LIMITS.max_keepalive_connections,
            keepalive_expiry=PER_HOST_LIMITS.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )


def _time_left(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """The socket timeout for one operation: `timeout`, but never past the running exchange's deadline."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the exchange's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(
            ssl_context, server_hostname, _time_left(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        # One address at a time, all within the deadline: given a host name, the socket module would give each
        # of the host's addresses the whole timeout (a CDN dropping our packets has many addresses).
        try:
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise httpcore.ConnectError(str(error)) from error
        refused = httpcore.ConnectError(f"no address for {host}")
        for *_, address in addresses:
            try:
                stream = self._sockets.connect_tcp(
                    str(address[0]),
                    port,
                    _time_left(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            except httpcore.ConnectError as error:  # refused or unreachable: the next address may answer
                refused = error
                continue
            return _DeadlineStream(stream)
        raise refused
