"""The function's cache of lookup answers through the real handlers (a real container on moto and the simulated
retailers and relays, a manual clock): a repeat inside max-age makes no upstream call and spends no relay
quota, defaults make one entry, errors are never stored, REST and MCP share it, and it can be turned off."""

from __future__ import annotations

from functions.core import RouteKey
from tests.integration.conftest import Lambdas
from tests.integration.test_mcp import call_tool
from tests.support.telemetry import TelemetryOutput

CU_PRODUCTS = ("/api/cu/products", {"keyword": "레쓰비"})
"""Fresh for 10 minutes (cu-prime, then cu-stock)."""
OY_PRODUCTS = "/api/oliveyoung/products"


def cached(lambdas: Lambdas, **settings: str) -> None:
    """Every route verified direct, and the functions deployed with their answer cache on."""
    lambdas.ready(RESPONSE_CACHE="on", **settings)
    lambdas.simulator.reset_calls()


def upstream_calls(lambdas: Lambdas) -> dict[str, int]:
    return {
        name: count for name, count in lambdas.simulator.calls().items() if count and name != "leakedSecrets"
    }


def test_a_repeat_inside_max_age_is_served_from_memory_fresh_for_what_is_left(lambdas: Lambdas) -> None:
    cached(lambdas)
    first = lambdas.lookup(*CU_PRODUCTS)
    lambdas.clock.advance(30_000)

    again = lambdas.lookup(*CU_PRODUCTS)

    assert (first.status, again.status) == (200, 200)
    assert again.body == first.body
    assert upstream_calls(lambdas) == {"direct:cu-prime": 1, "direct:cu-stock": 1}
    assert first.headers["Cache-Control"] == (
        "public, max-age=600, s-maxage=600, stale-while-revalidate=60, stale-if-error=3600"
    )
    assert again.headers["Cache-Control"] == (
        "public, max-age=570, s-maxage=570, stale-while-revalidate=60, stale-if-error=3600"
    )


def test_an_answer_is_fetched_again_once_its_max_age_has_passed(lambdas: Lambdas) -> None:
    cached(lambdas)
    lambdas.lookup(*CU_PRODUCTS)
    lambdas.clock.advance(600_000)

    assert lambdas.lookup(*CU_PRODUCTS).status == 200
    # The verdicts are old by now: this container may take either path.
    calls = upstream_calls(lambdas)
    assert calls.get("direct:cu-stock", 0) + calls.get("relay:cu-stock", 0) == 2


def test_a_parameter_at_its_default_and_one_left_out_are_one_entry(lambdas: Lambdas) -> None:
    cached(lambdas)
    assert lambdas.lookup(OY_PRODUCTS, {"keyword": "선크림"}).status == 200
    assert lambdas.lookup(OY_PRODUCTS, {"keyword": "선크림", "page": "1"}).status == 200
    assert lambdas.lookup(OY_PRODUCTS, {"keyword": "선크림", "page": "2"}).status == 200

    assert upstream_calls(lambdas) == {f"direct:{RouteKey.OY_PRODUCT_SEARCH}": 2}


def test_an_error_answer_is_never_stored(lambdas: Lambdas) -> None:
    cached(lambdas)
    lambdas.simulator.faults.set(f"direct:{RouteKey.OY_PRODUCT_SEARCH}", "http-404")

    answers = [lambdas.lookup(OY_PRODUCTS, {"keyword": "선크림"}) for _ in range(2)]

    assert [answer.status for answer in answers] == [404, 404]
    assert {answer.headers["Cache-Control"] for answer in answers} == {"no-store"}
    assert upstream_calls(lambdas) == {f"direct:{RouteKey.OY_PRODUCT_SEARCH}": 2}


def test_a_hit_through_the_relay_spends_no_relay_quota(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(direct=False)
    lambdas.loaded(lambdas.deploy(RESPONSE_CACHE="on"))
    lambdas.simulator.reset_calls()

    for _ in range(3):
        assert lambdas.lookup(*CU_PRODUCTS).status == 200

    assert upstream_calls(lambdas) == {
        "relay:cu-prime": 1,
        "relay:cu-stock": 1,
        "relay-upstream:cu-prime": 1,
        "relay-upstream:cu-stock": 1,
    }


def test_rest_lookups_and_mcp_tool_calls_share_the_containers_answers(lambdas: Lambdas) -> None:
    cached(lambdas)
    rest = lambdas.lookup(*CU_PRODUCTS)

    tool = call_tool(lambdas, "cuProducts", CU_PRODUCTS[1])
    again = call_tool(lambdas, "cuProducts", CU_PRODUCTS[1])

    assert tool["structuredContent"] == again["structuredContent"] == rest.body["data"]
    assert upstream_calls(lambdas) == {"direct:cu-prime": 1, "direct:cu-stock": 1}


def test_hits_and_misses_are_counted_without_a_dimension_per_lookup(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    cached(lambdas)
    telemetry.text()  # forget what building the container wrote

    for _ in range(3):
        lambdas.lookup(*CU_PRODUCTS)

    outcomes = [m["dimensions"] for m in telemetry.metrics() if m["name"] == "ResponseCache"]
    assert outcomes == [
        {"service": "route-health", "Outcome": "miss"},
        {"service": "route-health", "Outcome": "hit"},
        {"service": "route-health", "Outcome": "hit"},
    ]


def test_response_cache_off_fetches_every_time(lambdas: Lambdas) -> None:
    lambdas.ready(RESPONSE_CACHE="off")
    lambdas.simulator.reset_calls()

    answers = [lambdas.lookup(*CU_PRODUCTS) for _ in range(2)]

    assert answers[0].headers["Cache-Control"] == answers[1].headers["Cache-Control"]
    assert upstream_calls(lambdas) == {"direct:cu-prime": 2, "direct:cu-stock": 2}
