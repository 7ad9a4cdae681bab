"""The direct transport: the fault matrix over httpx.MockTransport, the deadline, the cap, and no secrets."""

from __future__ import annotations

import gzip
import json
import socket
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, ConfigDict

from functions.adapters.direct import DirectTransport
from functions.adapters.http import MAX_JSON_DEPTH, decode_json, new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import CATALOG, cgv
from functions.catalog.spec import OperationSpec
from functions.core import (
    MAX_BODY_BYTES,
    PINNED_TO_RELAY,
    Reason,
    RelayGroup,
    RouteFailure,
    RouteKey,
    UpstreamRejected,
)
from tests.support.core_fakes import RecordingRelayEvents
from tests.support.specs import spec_of

DEADLINE_MS = 250
Handler = Callable[[httpx.Request], httpx.Response]


class SearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    keyword: str


class SearchBody(BaseModel):
    status: Literal["SUCCESS"]
    data: list[str]


def make_spec(key: RouteKey = RouteKey.OY_PRODUCT_SEARCH) -> OperationSpec[SearchParams, SearchBody]:
    return spec_of(
        key,
        url="https://shop.example/api/search",
        headers={"Accept": "application/json", "User-Agent": "Mozilla/5.0"},
        params=SearchParams,
        probe=SearchParams(keyword="립밤"),
        response=SearchBody,
        relay_operation="product-search-v3",
    )


GOOD_BODY = {"status": "SUCCESS", "data": ["a", "b"]}


SIGNING_KEY = "made-up-cgv-key-for-the-direct-tests-012345"
SIGNING_KEYS = {cgv.SIGNING_KEY: SIGNING_KEY}.get
NOW = 1_767_225_600_000


def fetch_with(
    handler: Handler,
    *,
    spec: OperationSpec[Any, Any] | None = None,
    params: BaseModel | None = None,
    timeout_ms: int = DEADLINE_MS,
) -> Any:
    transport = DirectTransport(
        new_http_client(httpx.MockTransport(handler)), keys=SIGNING_KEYS, clock=lambda: NOW
    )
    return transport.fetch(spec or make_spec(), params or SearchParams(keyword="립밤"), timeout_ms=timeout_ms)


def failure_reason(handler: Handler, **kwargs: Any) -> Reason:
    with pytest.raises(RouteFailure) as caught:
        fetch_with(handler, **kwargs)
    return caught.value.reason


def answer(status: int, body: bytes = b"", headers: Mapping[str, str] | None = None) -> Handler:
    return lambda request: httpx.Response(status, content=body, headers=headers)


def raising(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


def test_a_valid_200_body_is_returned_validated() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=GOOD_BODY)

    body = fetch_with(handler)

    assert body == SearchBody(status="SUCCESS", data=["a", "b"])
    assert seen[0].method == "POST"
    assert str(seen[0].url) == "https://shop.example/api/search"
    assert json.loads(seen[0].content) == {"keyword": "립밤"}
    assert seen[0].headers["user-agent"] == "Mozilla/5.0"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (401, Reason.HTTP_401),
        (403, Reason.HTTP_403),
        (429, Reason.HTTP_429),
        *[(status, Reason.HTTP_5XX) for status in (500, 502, 503, 504)],
        *[(status, Reason.HTTP_ERROR) for status in (301, 302, 204, 405, 408)],
    ],
)
def test_statuses_that_say_the_route_does_not_work(status: int, reason: Reason) -> None:
    headers = {"Location": "https://shop.example/login"} if 300 <= status < 400 else None
    assert failure_reason(answer(status, b'{"status":"SUCCESS","data":[]}', headers)) is reason


def test_a_redirect_is_never_followed() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(302, headers={"Location": "https://shop.example/elsewhere"})

    assert failure_reason(handler) is Reason.HTTP_ERROR
    assert calls == ["https://shop.example/api/search"]


@pytest.mark.parametrize("status", [400, 404, 422])
def test_caller_meaningful_statuses_are_not_route_failures(status: int) -> None:
    with pytest.raises(UpstreamRejected) as caught:
        fetch_with(answer(status, b'{"error":"bad"}'))
    assert caught.value.status == status


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (httpx.ConnectError("connection refused"), Reason.NETWORK_ERROR),
        (httpx.RemoteProtocolError("server disconnected"), Reason.NETWORK_ERROR),
        (httpx.ReadError("reset"), Reason.NETWORK_ERROR),
        (httpx.ReadTimeout("read timed out"), Reason.TIMEOUT),
        (httpx.ConnectTimeout("connect timed out"), Reason.TIMEOUT),
        (httpx.PoolTimeout("pool"), Reason.TIMEOUT),
    ],
)
def test_transport_errors(exc: Exception, reason: Reason) -> None:
    assert failure_reason(raising(exc)) is reason


def test_a_real_refused_connection_is_a_network_error() -> None:
    with socket.socket() as probe:  # a free port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    local = replace(make_spec(), base_url=f"http://127.0.0.1:{port}/api", headers={}, method="GET")
    with new_http_client() as client, pytest.raises(RouteFailure) as caught:
        DirectTransport(client).fetch(local, SearchParams(keyword="x"), timeout_ms=DEADLINE_MS)
    assert caught.value.reason is Reason.NETWORK_ERROR


def test_a_slow_drip_body_past_the_deadline_is_a_timeout() -> None:
    def drip() -> Iterator[bytes]:
        yield b'{"status":"SUCCESS","data":['
        for _ in range(40):  # every chunk well within a per-read timeout, the whole far past the deadline
            time.sleep(0.05)
            yield b'"x",'
        yield b'"x"]}'

    started = time.monotonic()
    assert failure_reason(lambda request: httpx.Response(200, content=drip())) is Reason.TIMEOUT
    assert time.monotonic() - started < 1.2


def test_a_slow_but_timely_answer_succeeds() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        time.sleep(0.05)
        return httpx.Response(200, json=GOOD_BODY)

    assert fetch_with(handler).data == ["a", "b"]


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html><body>Security verification</body></html>",
        b"  \n<html><head><title>403 Forbidden</title></head></html>",
        b"<!doctype HTML>",
        b'{"status": "SUCCESS", ',
        b"not json at all",
        b"",
        b"\xff\xfe\x00",
        b"[" * 100_000 + b"]" * 100_000,  # 200 KB: the JSON parser itself runs out of stack
        b'{"status":"SUCCESS","data":' + b"[" * 500 + b"]" * 500 + b"}",  # parses; too deep for what follows
    ],
)
def test_html_and_non_json_200s_are_invalid_responses(body: bytes) -> None:
    assert failure_reason(answer(200, body, {"Content-Type": "application/json"})) is Reason.INVALID_RESPONSE


@pytest.mark.parametrize(
    "body",
    [
        {"status": "FAIL", "data": []},
        {"data": ["a"]},
        {"status": "SUCCESS"},
        {"status": "SUCCESS", "data": 1},
    ],
)
def test_a_wrong_shape_is_a_shape_failure_never_an_empty_result(body: object) -> None:
    assert failure_reason(answer(200, json.dumps(body).encode())) is Reason.SHAPE


def test_json_that_is_not_an_object_is_an_invalid_response() -> None:
    assert failure_reason(answer(200, b"[]")) is Reason.INVALID_RESPONSE


def oversize_json() -> bytes:
    body = b'{"status":"SUCCESS","data":["' + b"a" * MAX_BODY_BYTES + b'"]}'
    return body[: MAX_BODY_BYTES + 1]


def test_a_body_over_2_mib_with_content_length_is_too_large() -> None:
    assert failure_reason(answer(200, oversize_json())) is Reason.RESPONSE_TOO_LARGE


def test_a_streamed_body_over_2_mib_is_too_large_and_not_read_further() -> None:
    produced: list[int] = []

    def chunks() -> Iterator[bytes]:
        for _ in range(64):  # 4 MiB offered in 64 KiB chunks
            produced.append(1)
            yield b"a" * 65_536

    assert failure_reason(lambda request: httpx.Response(200, content=chunks())) is Reason.RESPONSE_TOO_LARGE
    assert len(produced) == 33  # stops at the first chunk past 2 MiB


def test_a_body_of_exactly_2_mib_is_accepted() -> None:
    padding = MAX_BODY_BYTES - len(b'{"status":"SUCCESS","data":[""]}')
    body = b'{"status":"SUCCESS","data":["' + b"a" * padding + b'"]}'
    assert len(body) == MAX_BODY_BYTES
    assert len(fetch_with(answer(200, body)).data[0]) == padding


def test_a_pinned_key_fails_without_touching_the_network() -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=GOOD_BODY)

    assert failure_reason(handler, spec=make_spec(RouteKey.GS25_STOCK)) is Reason.PINNED_RELAY
    assert calls == []


def test_cookies_are_neither_kept_nor_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json=GOOD_BODY, headers={"Set-Cookie": "session=abc; Path=/; Domain=shop.example"}
        )

    transport = DirectTransport(new_http_client(httpx.MockTransport(handler)))
    for _ in range(2):
        transport.fetch(make_spec(), SearchParams(keyword="a"), timeout_ms=DEADLINE_MS)
    assert [request.headers.get("cookie") for request in seen] == [None, None]


RELAY_SECRETS = ("relay-token-abc", "access-id-def", "access-secret-ghi")
CREDENTIAL_HEADERS = ("authorization", "cf-access-client-id", "cf-access-client-secret")


def test_relay_credentials_never_reach_a_direct_request() -> None:
    """Direct and relay clients share nothing; every direct request is checked for any trace of a secret."""
    direct_requests: list[httpx.Request] = []
    relay_requests: list[httpx.Request] = []

    def retailer(request: httpx.Request) -> httpx.Response:
        direct_requests.append(request)
        text = str(request.url) + str(request.headers.raw) + request.content.decode()
        assert not any(name in request.headers for name in CREDENTIAL_HEADERS)
        assert not any(secret in text for secret in RELAY_SECRETS)
        return httpx.Response(200, json=GOOD_BODY)

    def relay(request: httpx.Request) -> httpx.Response:
        relay_requests.append(request)
        return httpx.Response(200, json=GOOD_BODY)

    endpoint = RelayEndpoint.parse(
        RelayGroup.OLIVEYOUNG, "https://relay.example", RelayCredentials(*RELAY_SECRETS)
    )
    relays = RelayTransport(
        new_http_client(httpx.MockTransport(relay)),
        {RelayGroup.OLIVEYOUNG: endpoint},
        events=RecordingRelayEvents(),
    )
    direct = DirectTransport(new_http_client(httpx.MockTransport(retailer)))
    for _ in range(2):  # interleaved, so any state shared between the two would show up
        relays.fetch(make_spec(), SearchParams(keyword="a"), timeout_ms=DEADLINE_MS)
        direct.fetch(make_spec(), SearchParams(keyword="a"), timeout_ms=DEADLINE_MS)

    assert len(direct_requests) == 2
    assert relay_requests[0].headers["authorization"] == "Bearer relay-token-abc"


@pytest.mark.parametrize("header", ["Authorization", "CF-Access-Client-Id", "cf-access-client-secret"])
def test_a_spec_carrying_a_credential_header_is_refused_before_sending(header: str) -> None:
    calls: list[httpx.Request] = []
    leaky = replace(make_spec(), headers={header: "x"})

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=GOOD_BODY)

    with pytest.raises(RuntimeError):
        fetch_with(handler, spec=leaky)
    assert calls == []


# --- content-codings and JSON depth ---------------------------------------------------------------


def streamed(body: bytes, coding: str) -> Handler:
    """A 200 whose body arrives as sent on the wire (httpx decodes a body given whole while building it)."""
    return lambda request: httpx.Response(
        200, content=iter([body[:7], body[7:]]), headers={"Content-Encoding": coding}
    )


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("identity", lambda body: body),
        (" GZIP ", gzip.compress),
    ],
)
def test_one_known_content_coding_is_decoded(coding: str, encode: Callable[[bytes], bytes]) -> None:
    assert fetch_with(streamed(encode(json.dumps(GOOD_BODY).encode()), coding)).data == ["a", "b"]


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip, gzip", gzip.compress(gzip.compress(json.dumps(GOOD_BODY).encode()))),  # stacked: refused
        ("gzip, identity, deflate", gzip.compress(json.dumps(GOOD_BODY).encode())),
        ("br", json.dumps(GOOD_BODY).encode()),
        ("zstd", json.dumps(GOOD_BODY).encode()),
        ("gzip", json.dumps(GOOD_BODY).encode()),  # says gzip, is not
        ("gzip", gzip.compress(json.dumps(GOOD_BODY).encode())[:-4]),  # cut short
    ],
    # Named, not shown: gzip output holds the time, and every xdist worker must collect the same test ids.
    ids=["stacked", "identity-and-deflate-after-gzip", "br", "zstd", "not-gzip", "gzip-cut-short"],
)
def test_stacked_unknown_or_broken_content_codings_are_invalid_responses(coding: str, body: bytes) -> None:
    assert failure_reason(streamed(body, coding)) is Reason.INVALID_RESPONSE


def test_json_nested_up_to_the_limit_is_decoded_and_one_deeper_is_not() -> None:
    assert decode_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(RouteFailure) as caught:
        decode_json(b'{"a":' * MAX_JSON_DEPTH + b"[]" + b"}" * MAX_JSON_DEPTH)
    assert caught.value.reason is Reason.INVALID_RESPONSE


@pytest.mark.parametrize(
    "body",
    [
        b'{"siteNm": "CGV \\ud800 X", "\\udc00": ["\\ud83d", {"a": "\\ude00!"}]}',  # escaped halves
        '{"siteNm": "CGV \ud800 X", "\udc00": ["\ud83d", {"a": "\ude00!"}]}'.encode("utf-8", "surrogatepass"),
        '{"siteNm": "CGV \ud800 X", "\udc00": ["\ud83d", {"a": "\ude00!"}]}'.encode(
            "utf-16", "surrogatepass"
        ),
    ],
    ids=["escaped", "utf-8-bytes", "utf-16"],
)
def test_a_lone_surrogate_anywhere_is_decoded_as_u_fffd(body: bytes) -> None:
    decoded = decode_json(body)
    assert decoded == {"siteNm": "CGV \ufffd X", "\ufffd": ["\ufffd", {"a": "\ufffd!"}]}
    json.dumps(decoded, ensure_ascii=False).encode()  # writable as UTF-8 again


def test_a_surrogate_pair_stays_one_character() -> None:
    assert decode_json(b'["\\ud83c\\udfac \xf0\x9f\x8e\xac"]') == ["\U0001f3ac \U0001f3ac"]


@pytest.mark.parametrize("number", [b"NaN", b"-Infinity", b"1e999", b"-1" + b"0" * 400 + b".0"])
def test_a_number_no_json_can_carry_is_an_invalid_response(number: bytes) -> None:
    with pytest.raises(RouteFailure) as caught:
        decode_json(b'{"lat": ' + number + b"}")
    assert caught.value.reason is Reason.INVALID_RESPONSE
    assert decode_json(b'{"lat": 1e308, "lon": -0.0}') == {"lat": 1e308, "lon": -0.0}


# --- what a request carries -------------------------------------------------------------------------

TRANSPORT_HEADERS = {"host", "accept-encoding", "content-length", "content-type"}
"""What the HTTP exchange itself adds to a spec's headers: framing, and the codings it decodes."""


@pytest.mark.parametrize("key", sorted(set(CATALOG) - PINNED_TO_RELAY))
def test_a_direct_request_carries_only_its_specs_headers_and_never_announces_the_client(
    key: RouteKey,
) -> None:
    spec = CATALOG[key]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404)

    with pytest.raises(UpstreamRejected):
        fetch_with(handler, spec=spec, params=spec.probe_params(NOW))
    (request,) = seen
    spec_headers = {name.lower(): value for name, value in spec.headers.items()}
    if spec.signing is not None:  # CGV: and its signature, never its key
        path = request.url.path
        signed = spec.signing.headers(SIGNING_KEY, path, NOW)
        spec_headers.update({name.lower(): value for name, value in signed.items()})
        assert SIGNING_KEY not in str(request.headers.raw) + str(request.url)
    assert {name: request.headers[name] for name in spec_headers} == spec_headers
    assert set(request.headers) - set(spec_headers) <= TRANSPORT_HEADERS
    assert request.headers["accept-encoding"] == "gzip, deflate"
    assert "python-httpx" not in str(request.headers.raw)
    if "user-agent" not in spec_headers:  # e.g. Dtryx: the original sends only `Accept`
        assert "user-agent" not in request.headers


def test_a_signed_operation_without_its_key_sends_nothing_and_reports_configuration() -> None:
    spec = CATALOG[RouteKey.CGV_MOVIES]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    transport = DirectTransport(new_http_client(httpx.MockTransport(handler)))
    with pytest.raises(RouteFailure) as failed:
        transport.fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    assert failed.value.reason is Reason.CONFIGURATION
    assert seen == []


def test_the_signing_key_is_read_at_each_request_so_a_rotated_key_is_used_next() -> None:
    keys = {cgv.SIGNING_KEY: "old-key"}
    signatures: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        signatures.append(request.headers["x-signature"])
        return httpx.Response(200, json={"statusCode": 0, "data": []})

    transport = DirectTransport(
        new_http_client(httpx.MockTransport(handler)), keys=keys.get, clock=lambda: NOW
    )
    spec = CATALOG[RouteKey.CGV_THEATERS]
    transport.fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    keys[cgv.SIGNING_KEY] = "new-key"
    transport.fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    path = "/cnm/atkt/searchRegnList"
    assert signatures == [
        cgv.signature_headers(key, path, NOW)["X-SIGNATURE"] for key in ("old-key", "new-key")
    ]
