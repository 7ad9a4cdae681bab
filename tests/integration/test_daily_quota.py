"""The daily quota through the real lookup `lambda_handler`: who counts, the headers, the 429, the bypass,
the Korea day, and a store that fails or hangs (a real container on moto and the simulator)."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pytest

from functions.adapters.secrets import Secrets
from tests.integration.conftest import OPERATOR_SECRET, TABLE_NAME, TEST_SECRET_VALUES, Lambdas, error_body
from tests.support.telemetry import TelemetryOutput

ALICE_IP = "203.0.113.7"
BOB_IP = "198.51.100.23"
CU_PRODUCTS = ("/api/cu/products", {"keyword": "레쓰비"})
# 2026-01-01T14:59:59Z is 23:59:59 in Seoul; its next midnight there is 2026-01-01T15:00:00Z.
LAST_SECOND_KST = 1_767_279_599_000
MIDNIGHT_KST_S = 1_767_279_600


def upstream_calls(lambdas: Lambdas) -> int:
    return sum(lambdas.simulator.calls().values()) - lambdas.simulator.calls().get("leakedSecrets", 0)


def alice(lambdas: Lambdas, path: str = CU_PRODUCTS[0], query: Any = CU_PRODUCTS[1], **kwargs: Any) -> Any:
    """A lookup from Alice's address (CU products unless told)."""
    return lambdas.lookup(path, query, ip=ALICE_IP, **kwargs)


def test_error_answers_of_limited_endpoints_carry_the_counts_and_cacheable_answers_never_do(
    lambdas: Lambdas,
) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="5")
    reset = str(MIDNIGHT_KST_S)  # the tests' NOW is 09:00:42 on 2026-01-01 in Seoul

    ok = alice(lambdas)
    assert ok.status == 200
    assert ok.headers["Cache-Control"].startswith("public, ")
    assert ok.rate_limit() == {}  # a cache would hand Alice's counts to others
    bad_input = alice(lambdas, "/api/cu/products", {"keyword": " "})
    assert bad_input.status == 400
    assert bad_input.headers["Cache-Control"] == "no-store"
    assert bad_input.rate_limit() == {
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "3",
        "X-RateLimit-Reset": reset,
    }
    no_such_endpoint = alice(lambdas, "/api/gs25/nothing", None)
    assert no_such_endpoint.status == 404
    assert no_such_endpoint.rate_limit()["X-RateLimit-Remaining"] == "2"
    assert alice(lambdas, "/api/oliveyoung/products/A000000165760", None).status == 200
    assert alice(lambdas, "/api/gs25/nothing", None).rate_limit()["X-RateLimit-Remaining"] == "0"

    unlimited = alice(lambdas, "/api/seveneleven/popwords", None)
    assert unlimited.status == 200
    assert unlimited.rate_limit() == {}


def test_over_the_limit_is_429_before_any_validation_or_upstream_call_and_counted_in_a_metric(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="2")
    assert [alice(lambdas).status for _ in range(2)] == [200, 200]
    lambdas.simulator.reset_calls()

    refused = alice(lambdas, "/api/gs25/products", {"keyword": "코카콜라"})
    assert refused.status == 429
    seconds_to_midnight = MIDNIGHT_KST_S - lambdas.clock() // 1000
    spent = error_body(
        "DAILY_RATE_LIMIT_EXCEEDED",
        "This client has used its lookups for today; the limit resets at midnight in Korea.",
    )
    assert refused.body == {**spent, "error": {**spent["error"], "retryAfter": seconds_to_midnight}}
    assert refused.headers == {
        "Content-Type": "application/json",
        "X-RateLimit-Limit": "2",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(MIDNIGHT_KST_S),
        "Retry-After": str(seconds_to_midnight),
        "Cache-Control": "no-store",
    }
    assert alice(lambdas, "/api/cu/products", {"keyword": " "}).status == 429  # not 400: before validation
    assert upstream_calls(lambdas) == 0

    exceeded = [m for m in telemetry.metrics() if m["name"] == "LookupError"]
    assert [(m["value"], m["dimensions"]) for m in exceeded] == [
        (1, {"service": "route-health", "Code": "DAILY_RATE_LIMIT_EXCEEDED"})
    ] * 2
    assert ALICE_IP not in telemetry.text()


def test_another_client_is_not_affected(lambdas: Lambdas) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="1")
    assert [alice(lambdas).status for _ in range(2)] == [200, 429]
    assert lambdas.lookup(*CU_PRODUCTS, ip=BOB_IP).status == 200
    bob = lambdas.lookup("/api/cu/products", {"keyword": " "}, ip=BOB_IP)
    assert (bob.status, bob.rate_limit()["X-RateLimit-Remaining"]) == (429, "0")


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": f"Bearer {OPERATOR_SECRET}"},
        {"x-health-check-key": OPERATOR_SECRET},
    ],
)
def test_the_operator_key_bypasses_the_limit_and_is_not_counted(
    lambdas: Lambdas, headers: dict[str, str]
) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="1")
    operator = alice(lambdas, headers=headers)
    assert operator.status == 200
    assert operator.rate_limit() == {}
    assert alice(lambdas).status == 200  # the operator's lookup did not use the client's one
    assert alice(lambdas).status == 429
    assert alice(lambdas, headers=headers).status == 200
    assert alice(lambdas, headers={"Authorization": "Bearer wrong"}).status == 429


@pytest.mark.parametrize(
    "headers", [{"Authorization": "Bearer \ud800"}, {"x-health-check-key": f"{OPERATOR_SECRET}\udcff"}]
)
def test_an_operator_key_utf8_cannot_encode_is_no_key_not_a_500(
    lambdas: Lambdas, headers: dict[str, str]
) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="1")
    answers = [alice(lambdas, headers=headers) for _ in range(2)]
    assert [answer.status for answer in answers] == [200, 429]  # counted like any client's lookup


def test_the_limit_resets_at_midnight_in_seoul(lambdas: Lambdas) -> None:
    lambdas.clock.now = LAST_SECOND_KST
    lambdas.deploy(DAILY_RATE_LIMIT="1")
    assert alice(lambdas).status == 200
    refused = alice(lambdas)
    assert (refused.status, refused.headers["Retry-After"]) == (429, "1")

    lambdas.clock.advance(1_000)  # 00:00:00 in Seoul
    assert alice(lambdas).status == 200
    assert alice(lambdas).rate_limit()["X-RateLimit-Reset"] == str(MIDNIGHT_KST_S + 24 * 60 * 60)


def test_limit_zero_turns_it_off_and_the_prefixes_are_a_setting(lambdas: Lambdas) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="0")
    assert [alice(lambdas).status for _ in range(3)] == [200] * 3
    assert alice(lambdas).rate_limit() == {}

    lambdas.deploy(DAILY_RATE_LIMIT="1", DAILY_RATE_LIMIT_PREFIXES="/api/seveneleven/")
    assert [alice(lambdas).status for _ in range(2)] == [200, 200]
    assert [alice(lambdas, "/api/seveneleven/popwords", None).status for _ in range(2)] == [200, 429]


def test_counts_reach_the_store_as_hashes_of_the_source_ip_only(lambdas: Lambdas) -> None:
    lambdas.write_verdicts()
    lookups = lambdas.deploy(DAILY_RATE_LIMIT="10")
    for _ in range(3):
        assert alice(lambdas).status == 200
    lookups.upstreams.executor.shutdown(wait=True)

    items = lambdas.dynamodb.scan(TableName=TABLE_NAME)["Items"]
    quota_items = [item for item in items if item["pk"]["S"].startswith("quota#")]
    assert [(item["pk"]["S"], item["sk"]["S"]) for item in quota_items] == [
        ("quota#2026-01-01", hashlib.sha256(ALICE_IP.encode()).hexdigest())
    ]
    assert 1 <= int(quota_items[0]["lookups"]["N"]) <= 3  # the rest go in the next flush
    assert ALICE_IP not in json.dumps(items)


def test_a_hung_store_neither_slows_nor_refuses_lookups_and_the_limit_holds_in_the_container(
    lambdas: Lambdas, hung_dynamodb: Any, telemetry: TelemetryOutput
) -> None:
    lookups = lambdas.deploy(dynamodb=hung_dynamodb, DAILY_RATE_LIMIT="3", SNAPSHOT_PREFETCH_SECONDS="0")
    answers = []
    for _ in range(4):
        started = time.monotonic()
        answers.append(alice(lambdas).status)
        assert time.monotonic() - started < 1.0  # the store's own timeout is 2 s: nobody waited for it
    assert answers == [200, 200, 200, 429]
    lookups.upstreams.executor.shutdown(wait=True)  # the flush gives up after the store's timeout
    assert [m for m in telemetry.metrics() if m["name"] == "StoreError"]
    failed_calls = {
        log.get("operation") for log in telemetry.logs() if log.get("message") == "daily quota flush failed"
    }
    assert failed_calls == {"add_daily_lookups"}


# --- behind the edge (README.md, "Daily rate limit (per client)") --------------------------------------------

EDGE_KEY = "edge-origin-key-Tq40"
EDGE_IP = "130.176.0.9"
"""A CloudFront edge server: the source IP API Gateway sees for every viewer that edge serves."""
EDGE_SECRETS = Secrets.from_mapping({**TEST_SECRET_VALUES, "EDGE_ORIGIN_SECRET": EDGE_KEY}, source="test")


def via_the_edge(lambdas: Lambdas, viewer: str, key: str | None = EDGE_KEY) -> int:
    """A CU lookup CloudFront forwards for `viewer` (with the stack's origin key unless told)."""
    headers = {"CloudFront-Viewer-Address": f"{viewer}:51234"}
    if key is not None:
        headers["x-origin-verify"] = key
    return lambdas.lookup(*CU_PRODUCTS, ip=EDGE_IP, headers=headers).status


def test_behind_the_edge_each_viewer_is_counted_not_the_edge(lambdas: Lambdas) -> None:
    lambdas.deploy(secrets=EDGE_SECRETS, DAILY_RATE_LIMIT="2")

    assert [via_the_edge(lambdas, ALICE_IP) for _ in range(3)] == [200, 200, 429]
    assert [via_the_edge(lambdas, BOB_IP) for _ in range(2)] == [200, 200]  # same edge, another client
    assert [via_the_edge(lambdas, "2001:db8::7") for _ in range(3)] == [200, 200, 429]
    # Straight to execute-api, Alice is her own address, whose count is the one she spent through the edge.
    assert alice(lambdas).status == 429
    assert lambdas.lookup(*CU_PRODUCTS, ip=EDGE_IP).status == 200  # the edge's own address is untouched


@pytest.mark.parametrize("key", ["edge-origin-key-Tq41", "", None], ids=["wrong key", "empty key", "no key"])
def test_without_the_right_origin_key_the_viewer_address_is_ignored(
    lambdas: Lambdas, key: str | None
) -> None:
    lambdas.deploy(secrets=EDGE_SECRETS, DAILY_RATE_LIMIT="2")

    # Anyone can send CloudFront-Viewer-Address: without the key, each claimed viewer is the sender's address.
    assert [via_the_edge(lambdas, viewer, key) for viewer in (ALICE_IP, BOB_IP, "192.0.2.1")] == [
        200,
        200,
        429,
    ]
    assert alice(lambdas).status == 200
