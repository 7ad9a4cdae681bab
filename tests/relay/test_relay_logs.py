"""The relay's logs: one JSON line per request with its id, operation, status and duration, and nothing a
caller sent (tokens, keys, search words, consumer ids) or a retailer answered."""

from __future__ import annotations

import io
import json

from functions.core import RelayGroup, RouteKey
from relay.logs import RelayLog
from tests.relay.conftest import TOKENS, RelayUnderTest, auth, probe_body

CONSUMER = "c0ffee" * 10 + "c0ff"


def test_each_request_is_logged_without_anything_it_carried(relay: RelayUnderTest) -> None:
    secrets_sent = [*TOKENS.values(), "gs25-caller-key", "콜라검색어", CONSUMER, "wrong-token-value"]
    relay.post(RouteKey.GS25_STOCK, {**probe_body(RouteKey.GS25_STOCK), "apiKey": "gs25-caller-key"})
    relay.post(RouteKey.CU_STOCK, {**probe_body(RouteKey.CU_STOCK), "searchWord": "콜라검색어"})
    relay.post(RouteKey.OY_GOODS_INFO, headers={"x-relay-consumer": CONSUMER, "x-request-id": "req-42"})
    relay.client.get("/health", headers={"Authorization": "Bearer wrong-token-value"})
    relay.client.post("/v1/dtryx/movies", content=b"{bad json", headers=auth(RelayGroup.DTRYX))
    text = relay.log.getvalue()
    assert not any(secret in text for secret in secrets_sent)
    assert "store" not in text.lower()  # no retailer answer either
    requests = [line for line in relay.log_lines() if line["event"] == "request"]
    assert [(r["group"], r["operation"], r["status"]) for r in requests] == [
        ("convenience", "gs25-stock", 200),
        ("convenience", "cu-stock", 200),
        ("oliveyoung", "stock-goods-info-v3", 200),
        ("oliveyoung", "health", 401),
        ("dtryx", "movies", 400),
    ]
    assert requests[2]["requestId"] == "req-42"
    assert requests[1]["cache"] == "miss"
    assert all(set(r) >= {"time", "service", "requestId", "durationMs"} for r in requests)


def test_only_whitelisted_fields_in_their_shapes_are_written() -> None:
    stream = io.StringIO()
    log = RelayLog(stream)
    log.event(
        "request",
        requestId="ok-id",
        operation="has spaces and 비밀",
        status=-1,
        durationMs=float("nan"),
        token="secret",
        cache="hit",
    )
    (line,) = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert set(line) == {"time", "service", "event", "requestId", "cache"}
    assert log.stats() == {"queued": 0, "written": 1, "dropped": 0, "errors": 0, "lowSpace": False}


def test_a_broken_log_stream_never_fails_a_request() -> None:
    stream = io.StringIO()
    stream.close()
    log = RelayLog(stream)
    log.event("request", status=200)
    assert log.stats()["errors"] == 1
