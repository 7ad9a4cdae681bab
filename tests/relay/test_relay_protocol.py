"""The relay protocol, rule by rule: auth, paths and methods, bodies, headers, health and upstream answers."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from functions.adapters.relay import is_ready
from functions.core import RelayGroup, RouteKey, group_of
from relay.upstream import SEVEN_STOCK_REJECTION
from sandbox.simulator.payloads import realistic_payload
from tests.relay.conftest import TOKENS, RelayFactory, RelayUnderTest, auth, path_of, probe_body

HEALTH_PATHS = {
    RelayGroup.OLIVEYOUNG: "/health",
    RelayGroup.CONVENIENCE: "/v1/convenience/health",
    RelayGroup.DTRYX: "/v1/dtryx/health",
    RelayGroup.CGV: "/v1/cgv/health",
}
CORE_FAILURE = {"error": "Relay request failed"}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


# --- auth ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("group", list(RelayGroup))
@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer wrong", "bearer {token}", "Bearer  {token}", "Bearer {token} ", "{token}"],
)
def test_every_path_needs_the_exact_bearer_token(
    relay: RelayUnderTest, group: RelayGroup, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization.format(token=TOKENS[group])}
    for method, path in [("GET", HEALTH_PATHS[group]), ("POST", f"/v1/{group}/nothing-here")]:
        response = relay.client.request(method, path, headers=headers)
        assert (response.status_code, response.json()) == (401, {"error": "Unauthorized"})
    assert relay.retailers.calls() == 0


def test_one_groups_token_opens_no_other_group(relay: RelayUnderTest) -> None:
    response = relay.client.get(HEALTH_PATHS[RelayGroup.DTRYX], headers=auth(RelayGroup.OLIVEYOUNG))
    assert response.status_code == 401
    assert relay.post(RouteKey.CU_PRIME, headers=auth(RelayGroup.DTRYX)).status_code == 401


def test_cloudflare_access_headers_are_not_the_relays_business(relay: RelayUnderTest) -> None:
    access = {"CF-Access-Client-Id": "id.access", "CF-Access-Client-Secret": "secret"}
    assert relay.post(RouteKey.DTRYX_MOVIES, headers=access).status_code == 200
    response = relay.client.get(HEALTH_PATHS[RelayGroup.DTRYX], headers=access)
    assert response.status_code == 401  # Access at the edge, the bearer token at the relay


# --- paths, methods, query strings -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/oliveyoung/find-store", 404),  # Olive Young: never 405
        ("PUT", "/v1/oliveyoung/find-store", 404),
        ("POST", "/v1/oliveyoung/find-store?x=1", 404),
        ("POST", "/v1/oliveyoung/unknown", 404),
        ("GET", "/health?x=1", 404),
        ("POST", "/health", 404),
        ("GET", "/v1/oliveyoung/health", 404),
    ],
)
def test_olive_young_answers_404_for_anything_it_does_not_serve(
    make_relay: RelayFactory, method: str, path: str, status: int
) -> None:
    relay = make_relay((RelayGroup.OLIVEYOUNG,))
    response = relay.client.request(method, path, headers=auth(RelayGroup.OLIVEYOUNG))
    assert (response.status_code, response.json()) == (status, {"error": "Not found"})


@pytest.mark.parametrize("group", [RelayGroup.CONVENIENCE, RelayGroup.DTRYX, RelayGroup.CGV])
def test_the_shared_core_answers_405_for_a_known_operation_and_404_for_the_rest(
    relay: RelayUnderTest, group: RelayGroup
) -> None:
    operation = "cu-prime" if group is RelayGroup.CONVENIENCE else "movies"
    cases = [
        ("GET", f"/v1/{group}/{operation}", 405, {"error": "Method not allowed"}),
        ("DELETE", f"/v1/{group}/{operation}", 405, {"error": "Method not allowed"}),
        ("POST", f"/v1/{group}/{operation}?x=1", 404, {"error": "Not found"}),
        ("POST", f"/v1/{group}/unknown", 404, {"error": "Not found"}),
        ("POST", f"/v1/{group}/health", 404, {"error": "Not found"}),  # health by another method: unknown
        ("GET", f"/v1/{group}/health?x=1", 404, {"error": "Not found"}),
        ("POST", f"/v1/{group}/", 404, {"error": "Not found"}),
    ]
    for method, path, status, body in cases:
        response = relay.client.request(method, path, headers=auth(group))
        assert (response.status_code, response.json()) == (status, body), (method, path)


def test_a_foreign_path_goes_to_the_dtryx_relay_which_checks_the_token_first(relay: RelayUnderTest) -> None:
    assert relay.client.get("/v1/cgv/theaters").status_code == 401
    response = relay.client.get("/anything", headers=auth(RelayGroup.DTRYX))
    assert (response.status_code, response.json()) == (404, {"error": "Not found"})


def test_convenience_paths_without_the_convenience_relay_are_404_without_a_token(
    make_relay: RelayFactory,
) -> None:
    relay = make_relay((RelayGroup.DTRYX,))
    response = relay.client.post("/v1/convenience/cu-prime", content=b"{}")
    assert (response.status_code, response.json()) == (404, {"error": "Not found"})


# --- request bodies --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (
            RouteKey.OY_GOODS_INFO,
            {"too-large": "Body too large", "json": "Invalid JSON", "input": "Invalid payload"},
        ),
        (RouteKey.CU_STOCK, dict.fromkeys(("too-large", "json", "input"), "Relay request failed")),
        (RouteKey.DTRYX_MOVIES, dict.fromkeys(("too-large", "json", "input"), "Relay request failed")),
    ],
)
def test_bodies_the_relay_refuses(relay: RelayUnderTest, key: RouteKey, expected: dict[str, str]) -> None:
    headers = auth(group_of(key))
    valid = probe_body(key)
    cases = [
        (b'{"x":"' + b"a" * 16_400 + b'"}', 413, "too-large"),
        (b"", 400, "json"),
        (b"{", 400, "json"),
        (b'{"a": NaN}', 400, "json"),
        (json.dumps({**valid, "extra": 1}).encode(), 400, "input"),
        (json.dumps([valid]).encode(), 400, "input"),
    ]
    for raw, status, kind in cases:
        response = relay.client.post(path_of(key), content=raw, headers=headers)
        assert (response.status_code, response.json()) == (status, {"error": expected[kind]}), raw[:40]
    assert relay.retailers.calls() == 0


def test_a_body_passing_the_input_rule_but_making_no_valid_request_is_refused(relay: RelayUnderTest) -> None:
    # The relay's rule takes any string; the spec's goods number is alphanumeric. The Lambda never sends this.
    response = relay.post(RouteKey.OY_GOODS_INFO, {"goodsNo": "not a goods number"})
    assert (response.status_code, response.json()) == (400, {"error": "Invalid payload"})
    assert relay.retailers.calls() == 0


def test_a_body_at_the_limit_is_read(relay: RelayUnderTest) -> None:
    body = json.dumps(probe_body(RouteKey.DTRYX_MOVIES)).encode()
    padded = body[:-1] + b" " * (16_384 - len(body)) + b"}"
    assert len(padded) == 16_384
    response = relay.client.post(
        path_of(RouteKey.DTRYX_MOVIES), content=padded, headers=auth(RelayGroup.DTRYX)
    )
    assert response.status_code == 200


# --- common headers ------------------------------------------------------------------------------


def test_every_answer_is_uncacheable_json_with_a_request_id(relay: RelayUnderTest) -> None:
    answers = [
        relay.client.get("/health"),
        relay.post(RouteKey.CU_PRIME),
        relay.post(RouteKey.OY_GOODS_INFO, headers={"x-request-id": "trace_1-A"}),
        relay.post(RouteKey.DTRYX_MOVIES, headers={"x-request-id": "bad id!"}),
    ]
    for response in answers:
        assert response.headers["content-type"] == "application/json"
        assert response.headers["cache-control"] == "no-store"
    assert answers[2].headers["x-request-id"] == "trace_1-A"
    assert UUID.fullmatch(answers[3].headers["x-request-id"])
    assert answers[1].headers["connection"] == "close"  # the shared core's port closes each connection


# --- health ------------------------------------------------------------------------------------


def test_health_bodies_are_what_the_lambda_probe_reads(relay: RelayUnderTest) -> None:
    for group, path in HEALTH_PATHS.items():
        response = relay.client.get(path, headers=auth(group))
        assert response.status_code == 200
        body = response.json()
        assert is_ready(group, body)
        expected = (
            {"state", "transport", "browserRequired", "pages", "active", "calls", "totalCalls", "rotations"}
            | {"rssBytes", "reason", "logging", "outstanding", "cache", "quota"}
            if group is RelayGroup.OLIVEYOUNG
            else {"status", "active", "outstanding", "queued", "quota", "logging"}
        )
        assert set(body) == expected
        assert set(body["quota"]) == {
            "dailyRemaining",
            "minuteRemaining",
            "resetAt",
            "blockedBy",
            "retryAfter",
        }
        assert set(body["logging"]) == {"queued", "written", "dropped", "errors", "lowSpace"}
    oy = relay.client.get("/health", headers=auth(RelayGroup.OLIVEYOUNG)).json()
    assert (oy["transport"], oy["browserRequired"], oy["reason"], oy["active"]) == (
        "http",
        False,
        "http",
        False,
    )
    assert set(oy["cache"]) == {
        "entries",
        "bytes",
        "maxEntries",
        "maxBytes",
        "hits",
        "misses",
        "expired",
        "evicted",
    }
    assert relay.retailers.calls() == 0


def test_after_shutdown_olive_young_reports_closed(relay: RelayUnderTest) -> None:
    relay.app.close()
    body = relay.client.get("/health", headers=auth(RelayGroup.OLIVEYOUNG)).json()
    assert (body["state"], body["reason"]) == ("closed", "shutdown")


# --- upstream answers ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(RouteKey))
def test_each_operation_calls_its_retailer_as_its_spec_says(relay: RelayUnderTest, key: RouteKey) -> None:
    response = relay.post(
        key, {**probe_body(key), "apiKey": "gs25-key"} if key is RouteKey.GS25_STOCK else None
    )
    assert response.status_code == 200, response.text
    assert relay.retailers.calls() == 1
    (sent,) = relay.retailers.requests
    from functions.catalog import spec_for

    spec = spec_for(key)
    built = spec.build_request(spec.probe_params(relay.clock()))
    assert (sent.method, str(sent.url)) == (built.method, built.url)
    for name, value in built.headers.items():
        assert sent.headers[name] == value
    assert "authorization" not in sent.headers
    assert "x-request-id" not in sent.headers
    assert not any(token in str(sent.url) + sent.content.decode() for token in TOKENS.values())
    spec.validate(response.json())  # the retailer's answer, passed on unwrapped
    if group_of(key) is not RelayGroup.DTRYX:
        assert response.headers["x-relay-cache"] == "miss"


def _answer(status: int, body: Any = None, *, text: str | None = None) -> Any:
    def answer(request: httpx.Request) -> httpx.Response:
        if text is not None:
            return httpx.Response(status, text=text, headers={"content-type": "text/html"})
        return httpx.Response(status, json=body)

    return answer


@pytest.mark.parametrize(
    "answer",
    [
        _answer(500, {"error": "boom"}),
        _answer(403, text="<html>blocked</html>"),
        _answer(302, {}),
        _answer(200, text="<!DOCTYPE html><html></html>"),
        _answer(200, {"status": "FAIL", "data": {}}),
        _answer(200, {"status": "SUCCESS", "data": {"storeList": "nope"}}),
        _answer(200, {"status": "SUCCESS", "data": {"storeList": []}, "error": "x"}),
    ],
)
def test_an_unusable_answer_is_502_and_never_passed_on(relay: RelayUnderTest, answer: Any) -> None:
    relay.retailers.answers[RouteKey.OY_FIND_STORE] = answer
    response = relay.post(RouteKey.OY_FIND_STORE)
    assert (response.status_code, response.json()) == (502, {"error": "Upstream unavailable"})
    relay.retailers.answers[RouteKey.CU_PRIME] = answer
    response = relay.post(RouteKey.CU_PRIME)
    assert (response.status_code, response.json()) == (502, CORE_FAILURE)


def test_a_retailer_timeout_is_504_on_the_shared_core_and_502_on_olive_young(relay: RelayUnderTest) -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    relay.retailers.answers[RouteKey.DTRYX_MOVIES] = hang
    relay.retailers.answers[RouteKey.OY_GOODS_INFO] = hang
    assert relay.post(RouteKey.DTRYX_MOVIES).status_code == 504
    assert relay.post(RouteKey.OY_GOODS_INFO).status_code == 502


def test_a_convenience_failure_code_is_502(relay: RelayUnderTest) -> None:
    relay.retailers.answers[RouteKey.CU_STOCK] = _answer(200, {"resp_cd": "3000", "data": {}})
    assert relay.post(RouteKey.CU_STOCK).status_code == 502


def test_seven_elevens_store_refusal_is_the_200_envelope(relay: RelayUnderTest) -> None:
    refusal = {"success": False, "code": 501, "message": SEVEN_STOCK_REJECTION, "extra": 1}
    relay.retailers.answers[RouteKey.SEVEN_STOCK] = _answer(400, refusal)
    response = relay.post(RouteKey.SEVEN_STOCK)
    assert response.status_code == 200
    assert response.json() == {
        "success": False,
        "error": "Relay request failed",
        "upstreamError": {"status": 400, "code": 501, "message": SEVEN_STOCK_REJECTION},
    }
    assert "x-relay-cache" not in response.headers
    assert relay.post(RouteKey.SEVEN_STOCK).status_code == 200
    assert relay.retailers.calls() == 2  # never cached
    assert [line["status"] for line in relay.log_lines() if line["event"] == "request"] == [502, 502]


@pytest.mark.parametrize(
    "refusal",
    [{"success": False, "code": 500, "message": SEVEN_STOCK_REJECTION}, {"success": False, "code": 501}],
)
def test_any_other_seven_eleven_400_is_502(relay: RelayUnderTest, refusal: dict[str, Any]) -> None:
    relay.retailers.answers[RouteKey.SEVEN_STOCK] = _answer(400, refusal)
    assert (relay.post(RouteKey.SEVEN_STOCK).status_code, relay.post(RouteKey.SEVEN_STOCK).json()) == (
        502,
        CORE_FAILURE,
    )


def test_a_stock_lookup_without_readable_quantities_is_502(relay: RelayUnderTest) -> None:
    store = {"storeCd": "1", "storeNm": "CU", "stock": None}
    relay.retailers.answers[RouteKey.CU_STORE] = _answer(200, {"storeList": [store]})
    assert (
        relay.post(RouteKey.CU_STORE, {**probe_body(RouteKey.CU_STORE), "itemCd": "880"}).status_code == 502
    )
    assert relay.post(RouteKey.CU_STORE).status_code == 200  # no item asked for: no stock needed
    relay.retailers.answers[RouteKey.GS25_STOCK] = _answer(200, {"stores": [{"realStockQuantity": "many"}]})
    gs25 = {**probe_body(RouteKey.GS25_STOCK), "apiKey": "k"}
    assert relay.post(RouteKey.GS25_STOCK, gs25).status_code == 502


def test_a_crash_inside_a_job_still_answers_every_waiter(
    relay: RelayUnderTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: object, **kwargs: object) -> bytes:
        raise RuntimeError("bug")

    for group_relay in relay.app.relays.values():
        monkeypatch.setattr(group_relay._upstream, "call", crash)
    assert (relay.post(RouteKey.OY_GOODS_INFO).status_code, relay.post(RouteKey.CU_PRIME).status_code) == (
        500,
        502,
    )
    assert relay.post(RouteKey.OY_GOODS_INFO).json() == {"error": "Relay failure"}


@pytest.mark.parametrize("cut", [b"\\ud83d", b"\xed\xa0\xbd"], ids=["escaped", "raw-bytes"])
def test_a_name_cut_mid_emoji_is_passed_on_with_u_fffd_in_its_place(
    relay: RelayUnderTest, cut: bytes
) -> None:
    # A backend that cuts a name inside an emoji's surrogate pair sends half of it: as a JSON escape, or as
    # the bytes a lenient encoder writes for it. Neither can be written as UTF-8 again.
    payload = realistic_payload(RouteKey.DTRYX_MOVIES, {})
    assert isinstance(payload, dict)
    payload["Recordset"][0]["MovieNm"] = "CUT-HERE"
    body = (
        json.dumps(payload, ensure_ascii=False).encode().replace(b"CUT-HERE", b"\xed\x95\x98" + cut + b" X")
    )
    relay.retailers.answers[RouteKey.DTRYX_MOVIES] = lambda request: httpx.Response(200, content=body)

    response = relay.post(RouteKey.DTRYX_MOVIES)

    assert response.status_code == 200
    assert response.json()["Recordset"][0]["MovieNm"] == "하\ufffd X"
