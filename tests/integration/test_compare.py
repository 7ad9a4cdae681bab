"""The comparison through the real lookup `lambda_handler` (a real container on moto, the simulated retailers
and relays): its answer, what may be cached, the daily quota, bad input, and its log line and metrics."""

from __future__ import annotations

from typing import Any

import pytest

from functions.core import RouteKey
from tests.integration.conftest import Lambdas
from tests.support.telemetry import TelemetryOutput

COMPARE = "/api/compare/products"
MEMBER_CALLS = {
    f"direct:{key}": 1
    for key in (
        RouteKey.CU_PRIME,
        RouteKey.CU_STOCK,
        RouteKey.GS25_PRODUCTS,
        RouteKey.SEVEN_GOODS,
        RouteKey.OY_PRODUCT_SEARCH,
    )
}


def upstream_calls(lambdas: Lambdas) -> dict[str, int]:
    return {
        name: count
        for name, count in lambdas.simulator.calls().items()
        if count and name != "leakedSecrets" and not name.startswith("relay-upstream:")
    }


def test_the_answer_is_every_retailers_rows_by_price_and_cacheable(lambdas: Lambdas) -> None:
    lambdas.ready()
    lambdas.simulator.reset_calls()

    answer = lambdas.lookup(COMPARE, {"keyword": "콜라", "limit": "2"})

    assert answer.status == 200, answer.body
    data = answer.body["data"]
    assert set(data) == {"keyword", "retailers", "results", "bestPrice", "errors"}
    assert (data["keyword"], data["retailers"], data["errors"]) == (
        "콜라",
        ["cu", "gs25", "seveneleven", "oliveyoung"],
        [],
    )
    prices = [row["price"] for row in data["results"] if row["price"] is not None]
    assert prices == sorted(prices)
    assert data["results"][-1]["retailer"] == "gs25"  # GS25's rows have no price: last
    assert data["bestPrice"] == data["results"][0]
    assert all(sum(row["retailer"] == name for row in data["results"]) <= 2 for name in data["retailers"])
    assert upstream_calls(lambdas) == MEMBER_CALLS
    assert answer.headers["Cache-Control"] == "public, max-age=600, s-maxage=600, stale-while-revalidate=60"
    assert answer.rate_limit() == {}


def test_an_answer_missing_a_retailer_is_not_stored_by_any_cache(lambdas: Lambdas) -> None:
    lambdas.ready(RESPONSE_CACHE="on")
    lambdas.simulator.faults.set(f"direct:{RouteKey.GS25_PRODUCTS}", "http-404")
    lambdas.simulator.reset_calls()

    answers = [lambdas.lookup(COMPARE, {"keyword": "콜라"}) for _ in range(2)]

    assert [answer.status for answer in answers] == [200, 200]
    assert answers[0].body["data"]["errors"] == [
        {
            "retailer": "gs25",
            "code": "UPSTREAM_NOT_FOUND",
            "message": "The upstream service has no such item.",
        }
    ]
    assert {answer.headers["Cache-Control"] for answer in answers} == {"no-store"}
    assert answers[0].rate_limit()  # not cacheable: it carries the client's counts like an error
    assert upstream_calls(lambdas) == {name: 2 for name in MEMBER_CALLS}  # asked again, all of them

    lambdas.simulator.faults.set(f"direct:{RouteKey.GS25_PRODUCTS}", "ok")
    complete = [lambdas.lookup(COMPARE, {"keyword": "콜라"}) for _ in range(2)]
    assert [answer.body["data"]["errors"] for answer in complete] == [[], []]
    assert upstream_calls(lambdas) == {name: 3 for name in MEMBER_CALLS}  # the complete one was stored


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"keyword": "콜라", "retailers": "cu,emart"}, "retailers"),
        ({"keyword": "콜라", "retailers": ""}, "retailers"),
        ({"keyword": " "}, "keyword"),
        ({}, "keyword"),
        ({"keyword": "콜라", "limit": "21"}, "limit"),
    ],
)
def test_bad_input_is_400_before_any_upstream_call(
    lambdas: Lambdas, query: dict[str, str], field: str
) -> None:
    lambdas.ready()
    lambdas.simulator.reset_calls()

    answer = lambdas.lookup(COMPARE, query)

    assert answer.status == 400
    assert answer.body["error"]["code"] == "INVALID_INPUT"
    [error] = answer.body["error"]["fields"]
    assert error["field"] == field
    if field == "retailers":
        assert "cu, gs25, seveneleven, oliveyoung" in error["message"]
    assert upstream_calls(lambdas) == {}


def test_a_comparison_is_one_unit_of_the_daily_quota(lambdas: Lambdas) -> None:
    lambdas.ready(DAILY_RATE_LIMIT="2")

    statuses = [lambdas.lookup(COMPARE, {"keyword": "콜라"}, ip="203.0.113.9").status for _ in range(3)]

    assert statuses == [200, 200, 429]


def test_one_log_line_has_each_retailers_outcome_and_the_router_counts_each_call(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{RouteKey.OY_PRODUCT_SEARCH}", "http-404")

    assert lambdas.lookup(COMPARE, {"keyword": "콜라", "retailers": "oliveyoung,cu"}).status == 200

    [line] = [line for line in telemetry.logs() if line["message"] == "lookup members"]
    assert line["lookup"] == "compare_products"
    assert {name: member["outcome"] for name, member in line["members"].items()} == {
        "oliveyoung": "UPSTREAM_NOT_FOUND",
        "cu": "ok",
    }
    lookups: list[dict[str, Any]] = [m for m in telemetry.metrics() if m["name"] == "Lookups"]
    assert sum(m["value"] for m in lookups) == 3  # oy-product-search, cu-prime, cu-stock
    assert not [m for m in telemetry.metrics() if m["name"] == "LookupError"]  # answered 200
