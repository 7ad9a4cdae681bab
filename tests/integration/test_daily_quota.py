"""The daily quota through the real lookup `lambda_handler`: who counts, the headers, the 429, the bypass,
the Korea day, and a store that fails or hangs (a real container on moto and the simulator)."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from functions.adapters.dynamo_store import DynamoVerdictStore, dynamodb_client
from functions.core import DIRECT_PROBED, RelayCheck, RelayGroup, RouteCheck
from functions.handlers import api, wiring
from sandbox.simulator.server import Simulator

ContainerFactory = Callable[..., wiring.Container]
TABLE_NAME = "route-health-test"  # conftest's
OPERATOR_SECRET = "hc-secret-Zq81"  # HEALTH_CHECK_SECRET in conftest's test secrets
ALICE_IP = "203.0.113.7"
BOB_IP = "198.51.100.23"
CU_PRODUCTS = ("/api/cu/products", {"keyword": "레쓰비"})
# 2026-01-01T14:59:59Z is 23:59:59 in Seoul; its next midnight there is 2026-01-01T15:00:00Z.
LAST_SECOND_KST = 1_767_279_599_000
MIDNIGHT_KST_S = 1_767_279_600


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    body: dict[str, Any]

    def rate_limit(self) -> dict[str, str]:
        return {
            name: value for name, value in self.headers.items() if name.lower().startswith("x-ratelimit-")
        }


@pytest.fixture
def call(api_event: Callable[..., dict[str, Any]], lambda_context: Any) -> Callable[..., Answer]:
    def invoke(
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        ip: str = ALICE_IP,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        event = api_event("GET", path, query=query, headers=headers)
        event["requestContext"]["http"]["sourceIp"] = ip
        result = api.lambda_handler(event, lambda_context)
        return Answer(result["statusCode"], result.get("headers") or {}, json.loads(result["body"]))

    return invoke


@pytest.fixture
def verdicts(store: DynamoVerdictStore, clock: Any) -> None:
    """Every direct route verified just now, every relay healthy."""
    routes = [RouteCheck(key, True, clock()) for key in DIRECT_PROBED]
    store.write_checks(routes, [RelayCheck(group, True, clock()) for group in RelayGroup], now=clock())


def upstream_calls(simulator: Simulator) -> int:
    return sum(simulator.calls().values()) - simulator.calls().get("leakedSecrets", 0)


def finish_background(container: wiring.Container) -> None:
    container.executor.shutdown(wait=True)


def test_answers_of_limited_endpoints_carry_the_headers_errors_too(
    make_container: ContainerFactory, call: Callable[..., Answer], clock: Any
) -> None:
    make_container(DAILY_RATE_LIMIT="5")
    reset = str(MIDNIGHT_KST_S)  # conftest's NOW is 09:00:42 on 2026-01-01 in Seoul

    ok = call(*CU_PRODUCTS)
    assert ok.status == 200
    assert ok.rate_limit() == {
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "4",
        "X-RateLimit-Reset": reset,
    }
    bad_input = call("/api/cu/products", {"keyword": " "})
    assert bad_input.status == 400
    assert bad_input.rate_limit()["X-RateLimit-Remaining"] == "3"
    no_such_endpoint = call("/api/gs25/nothing")
    assert no_such_endpoint.status == 404
    assert no_such_endpoint.rate_limit()["X-RateLimit-Remaining"] == "2"
    assert call("/api/oliveyoung/products/A000000165760").rate_limit()["X-RateLimit-Remaining"] == "1"

    unlimited = call("/api/seveneleven/popwords")
    assert unlimited.status == 200
    assert unlimited.rate_limit() == {}


def test_over_the_limit_is_429_before_any_validation_or_upstream_call_and_counted_in_a_metric(
    make_container: ContainerFactory,
    call: Callable[..., Answer],
    simulator: Simulator,
    telemetry: Any,
    clock: Any,
) -> None:
    make_container(DAILY_RATE_LIMIT="2")
    assert [call(*CU_PRODUCTS).status for _ in range(2)] == [200, 200]
    simulator.reset_calls()

    refused = call("/api/gs25/products", {"keyword": "코카콜라"})
    assert refused.status == 429
    assert refused.body == {
        "success": False,
        "error": {
            "code": "DAILY_RATE_LIMIT_EXCEEDED",
            "message": "This client has used its lookups for today; the limit resets at midnight in Korea.",
        },
    }
    seconds_to_midnight = MIDNIGHT_KST_S - clock() // 1000
    assert refused.headers == {
        "Content-Type": "application/json",
        "X-RateLimit-Limit": "2",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(MIDNIGHT_KST_S),
        "Retry-After": str(seconds_to_midnight),
    }
    assert call("/api/cu/products", {"keyword": " "}).status == 429  # not 400: refused before validation
    assert upstream_calls(simulator) == 0

    exceeded = [m for m in telemetry.metrics() if m["name"] == "LookupError"]
    assert [(m["value"], m["dimensions"]) for m in exceeded] == [
        (1, {"service": "route-health", "Code": "DAILY_RATE_LIMIT_EXCEEDED"})
    ] * 2
    assert ALICE_IP not in telemetry.text()


def test_another_client_is_not_affected(
    make_container: ContainerFactory, call: Callable[..., Answer]
) -> None:
    make_container(DAILY_RATE_LIMIT="1")
    assert [call(*CU_PRODUCTS).status for _ in range(2)] == [200, 429]
    bob = call(*CU_PRODUCTS, ip=BOB_IP)
    assert bob.status == 200
    assert bob.rate_limit()["X-RateLimit-Remaining"] == "0"


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": f"Bearer {OPERATOR_SECRET}"},
        {"x-health-check-key": OPERATOR_SECRET},
    ],
)
def test_the_operator_key_bypasses_the_limit_and_is_not_counted(
    make_container: ContainerFactory, call: Callable[..., Answer], headers: dict[str, str]
) -> None:
    make_container(DAILY_RATE_LIMIT="1")
    operator = call(*CU_PRODUCTS, headers=headers)
    assert operator.status == 200
    assert operator.rate_limit() == {}
    assert call(*CU_PRODUCTS).status == 200  # the operator's lookup did not use the client's one
    assert call(*CU_PRODUCTS).status == 429
    assert call(*CU_PRODUCTS, headers=headers).status == 200
    assert call(*CU_PRODUCTS, headers={"Authorization": "Bearer wrong"}).status == 429


@pytest.mark.parametrize(
    "headers", [{"Authorization": "Bearer \ud800"}, {"x-health-check-key": f"{OPERATOR_SECRET}\udcff"}]
)
def test_an_operator_key_utf8_cannot_encode_is_no_key_not_a_500(
    make_container: ContainerFactory, call: Callable[..., Answer], headers: dict[str, str]
) -> None:
    make_container(DAILY_RATE_LIMIT="1")
    first = call(*CU_PRODUCTS, headers=headers)
    assert first.status == 200
    assert first.rate_limit()["X-RateLimit-Remaining"] == "0"  # counted like any client's lookup
    assert call(*CU_PRODUCTS, headers=headers).status == 429


def test_the_limit_resets_at_midnight_in_seoul(
    make_container: ContainerFactory, call: Callable[..., Answer], clock: Any
) -> None:
    clock.now = LAST_SECOND_KST
    make_container(DAILY_RATE_LIMIT="1")
    assert call(*CU_PRODUCTS).status == 200
    refused = call(*CU_PRODUCTS)
    assert (refused.status, refused.headers["Retry-After"]) == (429, "1")

    clock.advance(1_000)  # 00:00:00 in Seoul
    fresh = call(*CU_PRODUCTS)
    assert fresh.status == 200
    assert fresh.rate_limit()["X-RateLimit-Reset"] == str(MIDNIGHT_KST_S + 24 * 60 * 60)


def test_limit_zero_turns_it_off_and_the_prefixes_are_a_setting(
    make_container: ContainerFactory, call: Callable[..., Answer]
) -> None:
    make_container(DAILY_RATE_LIMIT="0")
    assert [call(*CU_PRODUCTS).status for _ in range(3)] == [200] * 3
    assert call(*CU_PRODUCTS).rate_limit() == {}

    make_container(DAILY_RATE_LIMIT="1", DAILY_RATE_LIMIT_PREFIXES="/api/seveneleven/")
    assert [call(*CU_PRODUCTS).status for _ in range(2)] == [200, 200]
    assert [call("/api/seveneleven/popwords").status for _ in range(2)] == [200, 429]


def test_counts_reach_the_store_as_hashes_of_the_source_ip_only(
    make_container: ContainerFactory, call: Callable[..., Answer], dynamodb: Any, verdicts: None
) -> None:
    container = make_container(DAILY_RATE_LIMIT="10")
    for _ in range(3):
        assert call(*CU_PRODUCTS).status == 200
    finish_background(container)

    items = dynamodb.scan(TableName=TABLE_NAME)["Items"]
    quota_items = [item for item in items if item["pk"]["S"].startswith("quota#")]
    assert [(item["pk"]["S"], item["sk"]["S"]) for item in quota_items] == [
        ("quota#2026-01-01", hashlib.sha256(ALICE_IP.encode()).hexdigest())
    ]
    assert 1 <= int(quota_items[0]["lookups"]["N"]) <= 3  # the rest go in the next flush
    assert ALICE_IP not in json.dumps(items)


@pytest.fixture
def hung_dynamodb() -> Iterator[Any]:
    """A DynamoDB endpoint that accepts connections and never answers (client with the store's timeouts)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield dynamodb_client(endpoint_url=f"http://127.0.0.1:{listener.getsockname()[1]}")
    finally:
        listener.close()


def test_a_hung_store_neither_slows_nor_refuses_lookups_and_the_limit_holds_in_the_container(
    make_container: ContainerFactory, call: Callable[..., Answer], hung_dynamodb: Any, telemetry: Any
) -> None:
    container = make_container(
        dynamodb_client=hung_dynamodb, DAILY_RATE_LIMIT="3", SNAPSHOT_PREFETCH_SECONDS="0"
    )
    answers = []
    for _ in range(4):
        started = time.monotonic()
        answers.append(call(*CU_PRODUCTS).status)
        assert time.monotonic() - started < 1.0  # the store's own timeout is 2 s: nobody waited for it
    assert answers == [200, 200, 200, 429]
    finish_background(container)  # the flush gives up after the store's timeout
    errors = [m for m in telemetry.metrics() if m["name"] == "StoreError"]
    assert {m["dimensions"].get("Operation") for m in errors} >= {"add_daily_lookups"}
