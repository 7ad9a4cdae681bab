"""The relay transport: configuration rules, the request it sends, status and envelope mapping, health checks."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from functions.adapters.http import new_http_client
from functions.adapters.relay import (
    RelayConfigError,
    RelayCredentials,
    RelayEndpoint,
    RelayTransport,
    parse_retry_after,
)
from functions.catalog import CATALOG
from functions.catalog.spec import OperationSpec
from functions.core import (
    MAX_BODY_BYTES,
    ApiError,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteKey,
    group_of,
)
from sandbox.simulator.payloads import realistic_payload, soft_failure_payloads
from tests.support.core_fakes import RecordingRelayEvents
from tests.support.specs import spec_of

NOW = 1_750_000_000_000
DEADLINE_MS = 250
Handler = Callable[[httpx.Request], httpx.Response]
CREDS = RelayCredentials("tok-123", "id-456", "secret-789")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    brandCode: str


class Rows(BaseModel):
    model_config = ConfigDict(extra="allow")
    rows: list[Any]


def make_spec(key: RouteKey) -> OperationSpec[Params, Rows]:
    probe = Params(brandCode="indieart")
    return spec_of(
        key,
        url="https://retailer.example/x",
        params=Params,
        probe=probe,
        response=Rows,
        relay_operation="movies",
    )


GET_HEADERS = {
    "host",
    "accept",
    "accept-encoding",
    "authorization",
    "cf-access-client-id",
    "cf-access-client-secret",
}
"""Every header of a relay GET with the whole credential set: what the protocol names and the transport's own."""

DTRYX_OK = {"RetCode": "success", "rows": [1]}
OY_OK = {"status": "SUCCESS", "rows": [1]}
CONV_OK = {"success": True, "rows": [1]}


def transport_for(
    handler: Handler,
    group: RelayGroup = RelayGroup.DTRYX,
    creds: RelayCredentials = CREDS,
    events: RecordingRelayEvents | None = None,
) -> RelayTransport:
    endpoint = RelayEndpoint.parse(group, "https://relay.example/base/", creds)
    return RelayTransport(
        new_http_client(httpx.MockTransport(handler)),
        {group: endpoint},
        clock=lambda: NOW,
        events=events if events is not None else RecordingRelayEvents(),
    )


def misconfigured(error: RelayConfigError) -> tuple[RelayTransport, list[httpx.Request]]:
    """A transport whose Dtryx relay has a configuration error (and no other relay), with every request it
    sends recorded: there should be none."""
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"status": "ok"})

    transport = RelayTransport(
        new_http_client(httpx.MockTransport(handler)),
        {RelayGroup.DTRYX: error},
        events=RecordingRelayEvents(),
    )
    return transport, calls


def fetch(handler: Handler, key: RouteKey = RouteKey.DTRYX_MOVIES, **kwargs: Any) -> Any:
    return transport_for(handler, group_of(key), **kwargs).fetch(
        make_spec(key), Params(brandCode="indieart"), timeout_ms=DEADLINE_MS
    )


def service_error(handler: Handler, key: RouteKey = RouteKey.DTRYX_MOVIES, **kwargs: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        fetch(handler, key, **kwargs)
    return caught.value


def reply(status: int, body: object = None, headers: Mapping[str, str] | None = None) -> Handler:
    content = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    return lambda request: httpx.Response(status, content=content, headers=headers)


# --- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected_base"),
    [
        ("https://relay.example", "https://relay.example"),
        ("https://relay.example/", "https://relay.example"),
        ("https://relay.example:8443/prefix/", "https://relay.example:8443/prefix"),
        ("http://127.0.0.1:4319", "http://127.0.0.1:4319"),
        ("http://localhost:4320/relays/dtryx", "http://localhost:4320/relays/dtryx"),
        ("http://[::1]:4320", "http://[::1]:4320"),
        ("  https://relay.example  ", "https://relay.example"),
    ],
)
def test_valid_relay_urls(url: str, expected_base: str) -> None:
    assert RelayEndpoint.parse(RelayGroup.DTRYX, url, CREDS).base_url == expected_base


@pytest.mark.parametrize(
    "url",
    [
        "http://relay.example",
        "http://10.0.0.5:4320",
        "ftp://relay.example",
        "https://user:pass@relay.example",
        "https://user@relay.example",
        "https://relay.example/?a=1",
        "https://relay.example?",
        "https://relay.example/#frag",
        "https://",
        "relay.example",
        "",
        "https://relay.example:notaport",
    ],
)
def test_invalid_relay_urls(url: str) -> None:
    with pytest.raises(RelayConfigError):
        RelayEndpoint.parse(RelayGroup.DTRYX, url, CREDS)


@pytest.mark.parametrize(
    "creds",
    [
        RelayCredentials(""),
        RelayCredentials("   "),
        RelayCredentials("s3cr3t-tok", access_client_id="s3cr3t-id"),
        RelayCredentials("s3cr3t-tok", access_client_secret="s3cr3t-secret"),
    ],
)
def test_invalid_relay_credentials(creds: RelayCredentials) -> None:
    with pytest.raises(RelayConfigError) as caught:
        RelayEndpoint.parse(RelayGroup.OLIVEYOUNG, "https://relay.example", creds)
    assert "s3cr3t" not in str(caught.value)


@pytest.mark.parametrize(
    "creds",
    [
        RelayCredentials("s3cr3t-tök"),
        RelayCredentials("s3cr3t-토큰"),
        RelayCredentials("s3cr3t tok"),
        RelayCredentials("s3cr3t-tok\n"),
        RelayCredentials("s3cr3t\x00tok"),
        RelayCredentials("tok", "s3cr3t-ïd", "s3cr3t-secret"),
        RelayCredentials("tok", "s3cr3t-id", "s3cr3t-sécret"),
        RelayCredentials("tok", "s3cr3t-id", "s3cr3t\tsecret"),
    ],
)
def test_credentials_that_cannot_be_header_values_are_a_configuration_error(creds: RelayCredentials) -> None:
    # Before this check they failed only when headers were built: a 500 on lookups (with a character of the
    # secret in the logged exception) and network-error instead of configuration on health checks.
    with pytest.raises(RelayConfigError) as caught:
        RelayEndpoint.parse(RelayGroup.DTRYX, "https://relay.example", creds)
    message = str(caught.value)
    assert message.isascii()
    assert "s3cr3t" not in message

    transport, calls = misconfigured(caught.value)
    assert transport.check_health(RelayGroup.DTRYX, timeout_ms=DEADLINE_MS, now=NOW) == RelayCheck(
        RelayGroup.DTRYX, healthy=False, checked_at=NOW, reason=Reason.CONFIGURATION
    )
    with pytest.raises(ApiError) as lookup:
        transport.fetch(make_spec(RouteKey.DTRYX_MOVIES), Params(brandCode="a"), timeout_ms=DEADLINE_MS)
    assert lookup.value.status == 503
    assert calls == []


def test_credentials_never_show_in_repr_or_errors() -> None:
    endpoint = RelayEndpoint.parse(RelayGroup.DTRYX, "https://relay.example", CREDS)
    for text in (repr(CREDS), str(CREDS), repr(endpoint), str(endpoint)):
        assert "tok-123" not in text
        assert "id-456" not in text
        assert "secret-789" not in text
    with pytest.raises(RelayConfigError) as caught:
        RelayEndpoint.parse(RelayGroup.DTRYX, "https://tok-123@relay.example", CREDS)
    assert "tok-123" not in str(caught.value)


def test_an_unusable_or_missing_relay_answers_503() -> None:
    transport, calls = misconfigured(RelayConfigError("dtryx relay token is missing"))
    with pytest.raises(ApiError) as caught:
        transport.fetch(make_spec(RouteKey.DTRYX_MOVIES), Params(brandCode="a"), timeout_ms=DEADLINE_MS)
    assert caught.value.status == 503
    with pytest.raises(ApiError) as caught:
        transport.fetch(make_spec(RouteKey.OY_FIND_STORE), Params(brandCode="a"), timeout_ms=DEADLINE_MS)
    assert caught.value.status == 503
    assert calls == []


# --- lookups ------------------------------------------------------------------------------------


def test_the_lookup_request() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=DTRYX_OK)

    assert fetch(handler).model_dump() == DTRYX_OK
    request = seen[0]
    assert request.method == "POST"
    assert str(request.url) == "https://relay.example/base/v1/dtryx/movies"
    assert json.loads(request.content) == {"brandCode": "indieart"}
    assert request.headers["authorization"] == "Bearer tok-123"
    assert request.headers["cf-access-client-id"] == "id-456"
    assert request.headers["cf-access-client-secret"] == "secret-789"
    assert request.headers["accept"] == "application/json"
    assert request.headers["content-type"] == "application/json"
    assert len(request.headers["x-request-id"]) == 32
    # only what the relay protocol names, and the transport's own framing; no client library announced
    assert set(request.headers) == GET_HEADERS | {"content-length", "content-type", "x-request-id"}


def test_no_access_headers_without_an_access_pair() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=OY_OK)

    transport_for(handler, RelayGroup.OLIVEYOUNG, RelayCredentials("tok")).fetch(
        make_spec(RouteKey.OY_FIND_STORE), Params(brandCode="a"), timeout_ms=DEADLINE_MS
    )
    assert str(seen[0].url) == "https://relay.example/base/v1/oliveyoung/movies"
    assert "cf-access-client-id" not in seen[0].headers
    assert "cf-access-client-secret" not in seen[0].headers


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        ({"Retry-After": "42", "x-relay-quota-reason": "minute"}, 42),
        ({"Retry-After": format_datetime(datetime.fromtimestamp(NOW / 1000 + 90, UTC), usegmt=True)}, 90),
        # none or an unreadable one: a fixed 60 s, so the API's 429 always carries Retry-After
        ({"Retry-After": "soon"}, 60),
        ({b"Retry-After": "²".encode()}, 60),  # a relay's bytes, as received
        ({}, 60),
        # absurd ones are clamped to 1..86,400 s, never a 500
        ({"Retry-After": "9" * 5_000}, 86_400),
        ({"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, 86_400),
        ({"Retry-After": "NaN"}, 60),
        ({"Retry-After": "-99999999999999999999"}, 60),
    ],
)
def test_relay_quota_429_keeps_retry_after(headers: Any, retry_after: int) -> None:
    error = service_error(reply(429, {"error": "Relay quota exceeded", "reason": "minute"}, headers))
    assert (error.status, error.code, error.retry_after) == (429, "RELAY_QUOTA_EXCEEDED", retry_after)


RFC_DATE_LIKE = r"\A(Mon|Fri), [0-9]{1,30} (Jan|Dec) [0-9]{1,30} [0-9]{1,30}:[0-9]{1,30}:[0-9]{1,30} (GMT|[+-][0-9]{1,30})\Z"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0", 1),
        ("7", 7),
        ("999999", 86_400),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1),  # already past
        ("-5", None),
        ("1.5", None),
        ("9" * 5_000, 86_400),  # more digits than int() converts
        ("0" * 5_000 + "42", 42),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 86_400),
        ("Mon, 01 Jan 99999999999999999999 00:00:00 GMT", None),  # a year no datetime holds
        ("Mon, 01 Jan 2026 00:00:00 +99999999999999999999", None),  # an offset no timedelta holds
        ("NaN", None),
        ("inf", None),
        ("²", None),  # str.isdigit() is true for it, int() is not
        ("١٢", None),  # Arabic-Indic digits: not the delta-seconds of RFC 9110
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, seconds: int | None) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


@given(st.text() | st.from_regex(r"\A[0-9]{1,6000}\Z") | st.from_regex(RFC_DATE_LIKE))
def test_any_retry_after_is_clamped_or_unreadable(value: str) -> None:
    seconds = parse_retry_after(value, now=NOW)
    assert seconds is None or 1 <= seconds <= 86_400


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "UPSTREAM_BAD_RESPONSE"),
        (401, "UPSTREAM_BAD_RESPONSE"),
        (403, "UPSTREAM_BAD_RESPONSE"),
        (404, "UPSTREAM_BAD_RESPONSE"),  # unknown operation: a configuration problem, not "not found"
        (500, "UPSTREAM_BAD_RESPONSE"),
        (502, "UPSTREAM_BAD_RESPONSE"),
        (302, "UPSTREAM_BAD_RESPONSE"),
        (503, "UPSTREAM_ROUTE_UNAVAILABLE"),
        (504, "UPSTREAM_TIMEOUT"),
    ],
)
def test_relay_statuses(status: int, code: str) -> None:
    assert service_error(reply(status, {"error": "x"})).code == code


@pytest.mark.parametrize("status", [401, 403])
def test_gs25_refusing_the_relays_session_is_a_503_saying_so_and_counted(status: int) -> None:
    # The convenience relay passes GS25's own 401/403 on with its failure body: the GS25 session (or key)
    # on the relay is missing or expired. Our token is fine; the operator must renew the session.
    events = RecordingRelayEvents()
    error = service_error(
        reply(status, {"error": "Relay request failed"}), RouteKey.GS25_STOCK, events=events
    )
    assert (error.status, error.code) == (503, "UPSTREAM_ROUTE_UNAVAILABLE")
    assert "GS25 session" in error.message
    assert events.gs25_sessions_expired == 1


@pytest.mark.parametrize(
    ("key", "status", "body"),
    [
        (RouteKey.GS25_STOCK, 401, {"error": "Unauthorized"}),  # the relay's own answer: our token is wrong
        (RouteKey.GS25_STOCK, 403, {"error": "Unauthorized"}),
        (RouteKey.GS25_STOCK, 403, b"<html><title>Forbidden</title></html>"),  # Cloudflare Access
        (RouteKey.GS25_STOCK, 403, None),
        (RouteKey.GS25_STOCK, 400, {"error": "Relay request failed"}),
        (RouteKey.GS25_PRODUCTS, 403, {"error": "Relay request failed"}),
        (RouteKey.CU_STORE, 401, {"error": "Relay request failed"}),
    ],
)
def test_other_refusals_stay_502(key: RouteKey, status: int, body: object) -> None:
    events = RecordingRelayEvents()
    error = service_error(reply(status, body), key, events=events)
    assert (error.status, error.code) == (502, "UPSTREAM_BAD_RESPONSE")
    assert events.gs25_sessions_expired == 0


GS25_KEY = "gs25-api-key-Qv12"


@pytest.mark.parametrize("api_key", [GS25_KEY, None])
def test_the_gs25_api_key_goes_only_into_the_gs25_stock_relay_body(api_key: str | None) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        key = RouteKey(request.url.path.rsplit("/", 1)[-1])
        return httpx.Response(200, json=realistic_payload(key, json.loads(request.content)))

    transport = transport_for(handler, RelayGroup.CONVENIENCE, RelayCredentials("tok", api_key=api_key))
    convenience = [key for key in RouteKey if group_of(key) is RelayGroup.CONVENIENCE]
    for key in convenience:
        spec = CATALOG[key]
        transport.fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)

    assert [RouteKey(request.url.path.rsplit("/", 1)[-1]) for request in seen] == convenience
    for key, request in zip(convenience, seen, strict=True):
        body = json.loads(request.content)
        expected = dict(CATALOG[key].relay_body(CATALOG[key].probe_params(NOW)))
        if key is RouteKey.GS25_STOCK and api_key is not None:
            expected["apiKey"] = api_key
        assert body == expected
        assert GS25_KEY not in str(request.url) + str(request.headers)


@pytest.mark.parametrize("api_key", ["", "k" * 513, "s3cr3t\nkey", "s3cr3t\x7fkey"])
def test_an_api_key_the_relay_would_refuse_is_a_configuration_error(api_key: str) -> None:
    with pytest.raises(RelayConfigError) as caught:
        RelayEndpoint.parse(
            RelayGroup.CONVENIENCE, "https://relay.example", RelayCredentials("t", api_key=api_key)
        )
    assert "s3cr3t" not in str(caught.value)


def test_the_api_key_never_shows_in_repr() -> None:
    creds = RelayCredentials("tok", api_key=GS25_KEY)
    endpoint = RelayEndpoint.parse(RelayGroup.CONVENIENCE, "https://relay.example", creds)
    assert GS25_KEY not in repr(creds) + str(creds) + repr(endpoint)


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (RouteKey.CU_STORE, {"success": False, "rows": [1]}),
        (RouteKey.CU_STORE, {"error": "Relay request failed", "rows": [1]}),
        (RouteKey.CU_STORE, {"resp_cd": "3000", "rows": [1]}),
        (RouteKey.SEVEN_STOCK, soft_failure_payloads(RouteKey.SEVEN_STOCK)["relay-store-rejection"]),
        (RouteKey.OY_STOCK_STORES, {"status": "FAIL", "rows": [1]}),
        (RouteKey.OY_STOCK_STORES, {"rows": [1]}),
        (RouteKey.DTRYX_TIMETABLE, {"RetCode": "fail", "rows": [1]}),
        (RouteKey.DTRYX_TIMETABLE, [1, 2]),
        (RouteKey.DTRYX_TIMETABLE, {"RetCode": "success"}),  # passes the envelope, fails the spec
    ],
)
def test_soft_failure_envelopes_are_bad_responses(key: RouteKey, body: object) -> None:
    assert service_error(reply(200, body), key).code == "UPSTREAM_BAD_RESPONSE"


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (RouteKey.CU_STORE, {"resp_cd": "0000", "rows": []}),
        (RouteKey.CU_STORE, CONV_OK),
        (RouteKey.OY_STOCK_STORES, OY_OK),
        (RouteKey.DTRYX_TIMETABLE, DTRYX_OK),
    ],
)
def test_good_envelopes_pass(key: RouteKey, body: object) -> None:
    assert fetch(reply(200, body), key).model_dump() == body


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html></html>",
        b"{oops",
        b'{"RetCode":"success","rows":["' + b"a" * MAX_BODY_BYTES + b'"]}',
        b"[" * 100_000 + b"]" * 100_000,  # too deep for the JSON parser
        b'{"RetCode":"success","rows":' + b"[" * 100 + b"]" * 100 + b"}",  # too deep for what follows
    ],
)
def test_unusable_bodies_are_bad_responses(body: bytes) -> None:
    assert service_error(reply(200, body)).code == "UPSTREAM_BAD_RESPONSE"


def test_network_errors_are_bad_responses() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    assert service_error(refused).code == "UPSTREAM_BAD_RESPONSE"


def test_endpoint_urls_stay_under_the_base() -> None:
    endpoint = RelayEndpoint.parse(RelayGroup.DTRYX, "https://relay.example/base", CREDS)
    assert endpoint.url("/v1/dtryx/movies") == "https://relay.example/base/v1/dtryx/movies"
    with pytest.raises(RuntimeError):
        endpoint.url(".evil.example/v1")


# --- health -------------------------------------------------------------------------------------


def check(handler: Handler, group: RelayGroup) -> RelayCheck:
    return transport_for(handler, group).check_health(group, timeout_ms=DEADLINE_MS, now=NOW)


@pytest.mark.parametrize(
    ("group", "url", "body"),
    [
        (RelayGroup.OLIVEYOUNG, "https://relay.example/base/health", {"state": "ready", "quota": {}}),
        (RelayGroup.CONVENIENCE, "https://relay.example/base/v1/convenience/health", {"status": "ok"}),
        (RelayGroup.DTRYX, "https://relay.example/base/v1/dtryx/health", {"status": "ok", "active": 0}),
    ],
)
def test_healthy_relays(group: RelayGroup, url: str, body: object) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=body)

    assert check(handler, group) == RelayCheck(group, healthy=True, checked_at=NOW, reason=Reason.OK)
    assert (seen[0].method, str(seen[0].url)) == ("GET", url)
    assert seen[0].headers["authorization"] == "Bearer tok-123"
    assert seen[0].headers["cf-access-client-secret"] == "secret-789"
    assert set(seen[0].headers) == GET_HEADERS


def _raise(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("group", "handler", "reason"),
    [
        (RelayGroup.OLIVEYOUNG, reply(200, {"state": "starting"}), Reason.UNAVAILABLE),
        (RelayGroup.OLIVEYOUNG, reply(200, {"status": "ok"}), Reason.UNAVAILABLE),
        (RelayGroup.CONVENIENCE, reply(200, {"status": "degraded"}), Reason.UNAVAILABLE),
        (RelayGroup.DTRYX, reply(200, ["ok"]), Reason.INVALID_RESPONSE),
        (RelayGroup.DTRYX, reply(200, b"<html>down</html>"), Reason.INVALID_RESPONSE),
        (RelayGroup.DTRYX, reply(200, b"{nope"), Reason.INVALID_RESPONSE),
        (RelayGroup.DTRYX, reply(401, {"error": "Unauthorized"}), Reason.HTTP_401),
        (RelayGroup.DTRYX, reply(403), Reason.HTTP_403),
        (RelayGroup.DTRYX, reply(429), Reason.HTTP_429),
        (RelayGroup.DTRYX, reply(502), Reason.HTTP_5XX),
        (RelayGroup.DTRYX, reply(503), Reason.HTTP_5XX),
        (RelayGroup.DTRYX, reply(404), Reason.HTTP_ERROR),
        (RelayGroup.DTRYX, _raise(httpx.ConnectError("refused")), Reason.NETWORK_ERROR),
        (RelayGroup.DTRYX, _raise(httpx.ReadTimeout("slow")), Reason.TIMEOUT),
        (RelayGroup.DTRYX, _raise(RuntimeError("anything")), Reason.NETWORK_ERROR),
    ],
)
def test_unhealthy_relays(group: RelayGroup, handler: Handler, reason: Reason) -> None:
    assert check(handler, group) == RelayCheck(group, healthy=False, checked_at=NOW, reason=reason)


def test_invalid_or_missing_configuration_is_a_configuration_verdict() -> None:
    transport, calls = misconfigured(RelayConfigError("bad url"))
    for group in (RelayGroup.DTRYX, RelayGroup.CONVENIENCE):
        assert transport.check_health(group, timeout_ms=DEADLINE_MS, now=NOW) == RelayCheck(
            group, healthy=False, checked_at=NOW, reason=Reason.CONFIGURATION
        )
    assert calls == []
