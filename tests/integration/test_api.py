"""The lookup API through the real `lambda_handler`: API Gateway v2 events, a real container (moto DynamoDB,
the simulated retailers and relays over 127.0.0.1), and a manual clock."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from pydantic import SecretStr

from functions.catalog.contract import InvalidParams, operation_params
from functions.catalog.gs25 import ITEM_CODE_OR_KEYWORD
from functions.catalog.seveneleven import SEARCH_WINDOW
from functions.core import COOLDOWN_MS, RelayCheck, RelayGroup, RouteKey, group_of
from functions.core.input_rules import CrossRule
from functions.handlers import api
from functions.handlers.composition import LookupFunction
from functions.handlers.telemetry import MetricsRoutingEvents
from functions.services.routing import Router
from functions.services.snapshot_cache import SnapshotCache
from tests.integration.conftest import NOW, TABLE_NAME, TEST_SECRETS, Answer, Lambdas, error_body, explode
from tests.support.catalog_fixtures import ENDPOINT_OF, ENDPOINTS
from tests.support.events import api_event
from tests.support.executor import ManualExecutor
from tests.support.telemetry import TelemetryOutput

STOCK_STATUSES = {"in_stock", "out_of_stock", "not_sold", "unknown"}
STOCK_KEYS = (RouteKey.OY_STOCK_STORES, RouteKey.CU_STORE, RouteKey.SEVEN_STOCK)
LEGACY_KEYS = (RouteKey.OY_FIND_STORE, RouteKey.CU_STORE, RouteKey.DTRYX_MOVIES)


# --- helpers ---------------------------------------------------------------------------------------


def wait_for_background(lookups: LookupFunction) -> None:
    """Let the lookup function's background work (failure reports, refreshes) finish."""
    lookups.upstreams.executor.shutdown(wait=True)


def direct_calls(*keys: RouteKey) -> dict[str, int]:
    return {f"direct:{key}": 1 for key in keys}


def relay_calls(*keys: RouteKey) -> dict[str, int]:
    return {f"relay:{key}": 1 for key in keys}


def assert_no_routing_diagnostics(answer: Answer) -> None:
    allowed = {
        "content-type",
        "cache-control",
        "retry-after",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    }
    assert {name.lower() for name in answer.headers} <= allowed
    assert set(answer.body) <= {"success", "data", "error"}
    text = json.dumps(answer.body).lower()
    for word in ("via", "relay", "direct", 'route"'):
        assert f'"{word}' not in text


def assert_stock_fields(value: Any) -> int:
    """Every `stock` object anywhere in `value` has a known status and a consistent quantity; returns how many."""
    found = 0
    if isinstance(value, dict):
        if "status" in value and "quantity" in value:
            assert value["status"] in STOCK_STATUSES
            quantity = value["quantity"]
            assert quantity is None or (isinstance(quantity, int) and quantity >= 0)
            if value["status"] == "unknown":
                assert quantity is None
            if value["status"] == "in_stock":
                assert quantity is None or quantity > 0
            found += 1
        found += sum(assert_stock_fields(item) for item in value.values())
    elif isinstance(value, list):
        found += sum(assert_stock_fields(item) for item in value)
    return found


# --- happy paths ---------------------------------------------------------------------------------


def test_the_endpoints_cover_all_24_operations() -> None:
    assert {key for endpoint in ENDPOINTS for key in endpoint.keys} == set(RouteKey)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.path for e in ENDPOINTS])
def test_happy_path_direct_then_relay_with_the_same_form_and_no_trace_of_the_path(
    endpoint: Any, lambdas: Lambdas
) -> None:
    lookups = lambdas.ready()
    lambdas.simulator.reset_calls()

    direct_answer = lambdas.lookup_endpoint(endpoint)

    assert direct_answer.status == 200, direct_answer.body
    assert direct_answer.body["success"] is True
    assert isinstance(direct_answer.body["data"], dict)
    assert direct_answer.body["data"]
    # gs25-stock is pinned to the relay by the router; everything else goes direct.
    expected = {f"{'relay' if key is RouteKey.GS25_STOCK else 'direct'}:{key}": 1 for key in endpoint.keys}
    assert lambdas.used() == expected
    assert_no_routing_diagnostics(direct_answer)
    assert_stock_fields(direct_answer.body["data"])

    # Now the probe says direct is down: the same request goes to the relay and looks the same.
    lambdas.clock.advance(1)
    lambdas.write_verdicts(direct=False)
    lambdas.loaded(lookups)
    lambdas.simulator.reset_calls()

    relay_answer = lambdas.lookup_endpoint(endpoint)

    assert relay_answer.status == 200, relay_answer.body
    assert lambdas.used() == relay_calls(*endpoint.keys)
    # The simulated data may differ by request shape; the answer's form may not.
    assert set(relay_answer.body) == {"success", "data"}
    assert set(relay_answer.body["data"]) == set(direct_answer.body["data"])
    assert relay_answer.headers.keys() == direct_answer.headers.keys()
    assert_no_routing_diagnostics(relay_answer)


def test_stock_is_quantity_and_status(lambdas: Lambdas) -> None:
    lambdas.ready()
    for key in (*STOCK_KEYS, RouteKey.GS25_STOCK):
        answer = lambdas.lookup_endpoint(ENDPOINT_OF[key])
        assert answer.status == 200, (key, answer.body)
        assert assert_stock_fields(answer.body["data"]) >= 1, key


def test_seven_eleven_stock_is_one_store_of_one_item(lambdas: Lambdas) -> None:
    lambdas.ready()
    answer = lambdas.lookup("/api/seveneleven/stock", {"itemCd": "8801056018979", "storeCd": "64676"})
    assert answer.status == 200
    data = answer.body["data"]
    assert data["itemCode"] == "8801056018979"
    assert data["storeCode"] == "64676"
    assert data["stock"]["status"] in STOCK_STATUSES


def test_cu_stores_without_an_item_report_no_stock(lambdas: Lambdas) -> None:
    lambdas.ready()
    answer = lambdas.lookup("/api/cu/stores", {"lat": "37.5", "lon": "127.0"})
    assert answer.status == 200
    stores = answer.body["data"]["stores"]
    assert stores
    assert all("stock" not in row and row["storeCode"] for row in stores)


def test_openapi_document_lists_every_endpoint_and_parameter(lambdas: Lambdas) -> None:
    lambdas.deploy()
    answer = lambdas.lookup("/api/openapi.json")
    assert answer.status == 200
    paths = answer.body["paths"]
    for endpoint in ENDPOINTS:
        documented = endpoint.path.replace("A000000165760", "{goodsNo}")
        assert "get" in paths[documented], documented
        names = {param["name"] for param in paths[documented]["get"].get("parameters", [])}
        assert set(endpoint.query) <= names, documented
    timetable = {p["name"]: p for p in paths["/api/dtryx/timetable"]["get"]["parameters"]}
    assert all(timetable[name]["required"] for name in ("brandCode", "cinemaCode", "playDate"))
    assert "/api/openapi.json" not in paths


# --- bad input -------------------------------------------------------------------------------------

BAD_INPUTS: tuple[tuple[str, dict[str, str], str | None], ...] = (
    ("/api/oliveyoung/products", {}, "keyword"),
    ("/api/oliveyoung/products", {"keyword": "x", "size": "0"}, "size"),
    ("/api/oliveyoung/stores", {"lat": "91"}, "lat"),
    ("/api/oliveyoung/products/A$$", {}, "goodsNo"),
    ("/api/oliveyoung/stock", {"keyword": "명동"}, "productId"),
    ("/api/cu/products", {"keyword": "  "}, "keyword"),
    ("/api/cu/stores", {"lat": "37.5"}, "lon"),
    ("/api/cu/stores", {"lat": "nan", "lon": "127"}, "lat"),
    ("/api/gs25/stock", {"lat": "37.5", "lon": "127"}, None),
    ("/api/seveneleven/products", {"keyword": "커피", "page": "zero"}, "page"),
    ("/api/seveneleven/stores", {"keyword": "강남", "limit": "1000"}, "limit"),
    ("/api/seveneleven/popwords", {"label": "a b"}, "label"),
    ("/api/seveneleven/stock", {"itemCd": "8801056018979"}, "storeCd"),
    ("/api/dtryx/movies", {"brandCode": "indieart", "cinemaCode": "67"}, "cinemaCode"),
    ("/api/dtryx/play-dates", {"brandCode": "Indie Art", "cinemaCode": "000067"}, "brandCode"),
    (
        "/api/dtryx/timetable",
        {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2026-02-30"},
        "playDate",
    ),
    (
        "/api/dtryx/timetable",
        {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "20260101"},
        "playDate",
    ),
    ("/api/dtryx/timetable", {"brandCode": "indieart", "cinemaCode": "000067"}, "playDate"),
)


@pytest.mark.parametrize(("path", "query", "field"), BAD_INPUTS)
def test_bad_input_is_400_with_field_errors_and_no_upstream_call(
    path: str, query: dict[str, str], field: str | None, lambdas: Lambdas
) -> None:
    lambdas.ready()
    lambdas.simulator.reset_calls()

    answer = lambdas.lookup(path, query)

    assert answer.status == 400
    assert answer.body["success"] is False
    error = answer.body["error"]
    assert error["code"] == "INVALID_INPUT"
    assert error["message"]
    assert field in [item["field"] for item in error["fields"]]
    assert all(item["message"] for item in error["fields"])
    assert lambdas.used() == {}


@pytest.mark.parametrize(
    ("path", "query", "rule", "fields"),
    [
        ("/api/gs25/stock", {"lat": "37.5", "lon": "127"}, ITEM_CODE_OR_KEYWORD, [None]),
        (
            "/api/seveneleven/products",
            {"keyword": "커피", "page": "1000", "size": "20"},
            SEARCH_WINDOW,
            ["page", "size"],
        ),
    ],
)
def test_a_broken_rule_across_parameters_is_a_400_that_states_it(
    path: str, query: dict[str, str], rule: CrossRule, fields: list[str | None], lambdas: Lambdas
) -> None:
    lambdas.ready()
    lambdas.simulator.reset_calls()

    error = lambdas.lookup(path, query).body["error"]

    assert error["message"] == f"The request parameters are invalid: {rule.text}."
    assert [(item["field"], item["message"]) for item in error["fields"]] == [
        (name, rule.text) for name in fields
    ]
    assert lambdas.used() == {}


@pytest.mark.parametrize(("size", "taken"), [("3", 3), ("3.0", 3), ("3e0", 3), ("0.3e1", 3), ("3.5", None)])
def test_an_integer_parameter_takes_what_json_schema_calls_an_integer(
    size: str, taken: int | None, lambdas: Lambdas
) -> None:
    lambdas.ready()
    answer = lambdas.lookup("/api/seveneleven/products", {"keyword": "커피", "size": size})
    if taken is None:
        assert (answer.status, [item["field"] for item in answer.body["error"]["fields"]]) == (400, ["size"])
    else:
        assert answer.status == 200
        assert len(answer.body["data"]["products"]) == taken  # the simulated search answers `size` rows


def test_unknown_path_is_a_404_envelope(lambdas: Lambdas) -> None:
    lambdas.deploy()
    answer = lambdas.lookup("/api/nowhere")
    assert answer.status == 404
    assert answer.body == error_body("NOT_FOUND", "No such endpoint.")


# --- routing through the API -------------------------------------------------------------------


def test_direct_403_falls_back_once_then_relay_only_while_blocked_and_is_recorded(lambdas: Lambdas) -> None:
    key = RouteKey.OY_PRODUCT_SEARCH
    lookups = lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{key}", "http-403")
    lambdas.simulator.reset_calls()

    assert lambdas.lookup_endpoint(ENDPOINT_OF[key]).status == 200
    assert lambdas.used() == {**direct_calls(key), **relay_calls(key)}
    failed_at = lambdas.clock()

    for _ in range(3):
        lambdas.clock.advance(20_000)  # still inside the 5-minute block
        assert lambdas.lookup_endpoint(ENDPOINT_OF[key]).status == 200
    assert lambdas.used() == {f"direct:{key}": 1, f"relay:{key}": 4}

    wait_for_background(lookups)
    verdict = lambdas.store.read_snapshot().routes[key]
    assert verdict.direct is False
    assert verdict.failed_at == failed_at
    assert verdict.blocked_until == failed_at + COOLDOWN_MS
    # Other operations of the same service keep going direct.
    assert lambdas.store.read_snapshot().routes[RouteKey.OY_FIND_STORE].direct is True


def test_upstream_404_passes_through_with_no_fallback_and_no_block(lambdas: Lambdas) -> None:
    key = RouteKey.OY_GOODS_INFO
    lookups = lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{key}", "http-404")
    lambdas.simulator.reset_calls()

    answer = lambdas.lookup_endpoint(ENDPOINT_OF[key])

    assert answer.status == 404
    assert answer.body["error"]["code"] == "UPSTREAM_NOT_FOUND"
    assert lambdas.used() == direct_calls(key)
    assert lookups.router.local_block_until(key) is None
    wait_for_background(lookups)
    verdict = lambdas.store.read_snapshot().routes[key]
    assert verdict.direct is True
    assert verdict.failed_at is None


def test_both_known_bad_is_503_without_any_upstream_call(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(direct=False, relays_healthy=False)
    lambdas.loaded(lambdas.deploy())
    lambdas.clock.advance(5_000)
    lambdas.simulator.reset_calls()

    for endpoint in ENDPOINTS:
        if RouteKey.GS25_STOCK in endpoint.keys:
            continue  # pinned: never "known bad direct", it only depends on its relay
        answer = lambdas.lookup_endpoint(endpoint)
        assert answer.status == 503, endpoint.path
        assert answer.body == error_body(
            "UPSTREAM_ROUTE_UNAVAILABLE", "Neither the direct route nor the relay is working right now."
        )
    assert lambdas.used() == {}


def unavailable_routes(telemetry: TelemetryOutput) -> list[str]:
    """The route of every `route unavailable` log line (what the 503s-by-route query counts)."""
    return [log["route"] for log in telemetry.logs() if log["message"] == "route unavailable"]


def test_every_503_answer_counts_as_unavailable_in_the_lookup_metrics(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    # The 503-rate alarm divides Lookups{Path=unavailable} by all lookups: every 503 must land there.
    relayed, failing_direct = RouteKey.DTRYX_MOVIES, RouteKey.OY_PRODUCT_SEARCH
    lambdas.write_verdicts(keys=(failing_direct,))
    now = lambdas.clock()
    lambdas.store.write_checks([], [RelayCheck(RelayGroup.OLIVEYOUNG, False, now)], now=now)
    lambdas.loaded(lambdas.deploy())
    lambdas.simulator.faults.set("relay:dtryx", "http-503")  # the relay's own 503
    lambdas.simulator.faults.set(f"direct:{failing_direct}", "http-403")  # then: relay known unhealthy -> 503

    for key in (relayed, failing_direct):
        answer = lambdas.lookup_endpoint(ENDPOINT_OF[key])
        assert (answer.status, answer.body["error"]["code"]) == (503, "UPSTREAM_ROUTE_UNAVAILABLE")

    assert unavailable_routes(telemetry) == [relayed, failing_direct]
    lookups = [m["dimensions"]["Path"] for m in telemetry.metrics() if m["name"] == "Lookups"]
    assert lookups == ["unavailable", "unavailable"]
    codes = [m["dimensions"]["Code"] for m in telemetry.metrics() if m["name"] == "LookupError"]
    assert codes == ["UPSTREAM_ROUTE_UNAVAILABLE", "UPSTREAM_ROUTE_UNAVAILABLE"]


def test_a_lookup_counts_its_path_and_reports_the_snapshot_age(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.ready()
    telemetry.text()  # forget what building the container wrote

    assert lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.OY_PRODUCT_SEARCH]).status == 200

    found = {(m["name"], tuple(sorted(m["dimensions"].items()))) for m in telemetry.metrics()}
    assert found == {
        ("SnapshotAge", (("service", "route-health"),)),
        ("Lookups", (("Path", "direct"), ("service", "route-health"))),
    }


def test_a_direct_lookup_logs_no_line_at_the_default_level(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    # The decision is counted by Lookups{Path}; its log line is DEBUG (an INFO line per lookup cost ~40 us).
    lambdas.ready()
    telemetry.text()

    assert lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.OY_PRODUCT_SEARCH]).status == 200

    assert "route decided" not in telemetry.text()


def test_a_refused_failure_report_counts_as_stale_write_rejected(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    key = RouteKey.OY_PRODUCT_SEARCH
    lookups = lambdas.ready()
    # Another container already reported the same failure: this container's report is refused.
    lambdas.store.record_failure(key, at=lambdas.clock(), now=lambdas.clock())
    lambdas.simulator.faults.set(f"direct:{key}", "http-403")

    assert lambdas.lookup_endpoint(ENDPOINT_OF[key]).status == 200
    wait_for_background(lookups)

    rejected = [m["value"] for m in telemetry.metrics() if m["name"] == "StaleWriteRejected"]
    assert rejected == [1]


def test_stale_snapshot_uses_the_relay_then_direct_after_the_background_refresh(lambdas: Lambdas) -> None:
    endpoint = ENDPOINT_OF[RouteKey.DTRYX_MOVIES]
    lookups = lambdas.deploy()
    # Swap in a snapshot cache whose background work runs only when the test says so.
    executor = ManualExecutor()
    snapshots = SnapshotCache(lambdas.store.read_snapshot, clock=lambdas.clock, executor=executor)
    lookups.snapshots = snapshots
    lookups.router = Router(
        clock=lambdas.clock,
        snapshots=snapshots,
        reporter=None,
        relay_configured=lambda _group: True,
        events=MetricsRoutingEvents(),
    )
    lambdas.write_verdicts()
    snapshots.refresh_if_due()
    assert executor.run_pending() == 1
    lambdas.clock.advance(31_000)  # the cached snapshot is now older than 30 s
    lambdas.simulator.reset_calls()

    assert lambdas.lookup_endpoint(endpoint).status == 200
    assert lambdas.used() == relay_calls(*endpoint.keys)  # stale: relay now, refresh in the background

    assert executor.run_pending() == 1  # single flight: the request started exactly one refresh
    lambdas.simulator.reset_calls()
    assert lambdas.lookup_endpoint(endpoint).status == 200
    assert lambdas.used() == direct_calls(*endpoint.keys)


@pytest.mark.parametrize("key", [*STOCK_KEYS, RouteKey.OY_PRODUCT_SEARCH])
def test_a_schema_failure_is_never_an_empty_list_or_stock_zero(key: RouteKey, lambdas: Lambdas) -> None:
    lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{key}", "bad-shape")
    lambdas.simulator.faults.set(f"relay:{group_of(key)}", "bad-shape")
    lambdas.simulator.reset_calls()

    answer = lambdas.lookup_endpoint(ENDPOINT_OF[key])

    assert answer.status == 502
    assert answer.body == error_body(
        "UPSTREAM_BAD_RESPONSE", "The upstream service answered with an unusable response."
    )
    assert lambdas.used()[f"direct:{key}"] == 1
    assert lambdas.used()[f"relay:{key}"] == 1


def test_relay_quota_is_429_with_retry_after(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(direct=False)
    lambdas.loaded(lambdas.deploy())
    lambdas.simulator.faults.set("relay:dtryx", "http-429")

    answer = lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.DTRYX_MOVIES])

    assert answer.status == 429
    assert answer.body["error"]["code"] == "RELAY_QUOTA_EXCEEDED"
    assert answer.headers["Retry-After"] == "30"
    assert {name.lower() for name in answer.headers} == {  # Dtryx lookups count against the daily limit
        "content-type",
        "retry-after",
        "cache-control",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    }
    assert answer.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("api_key", ["gs25-api-key-expired", None])
def test_a_gs25_refusal_of_the_relays_session_is_a_503_saying_so_and_counted(
    api_key: str | None, lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    # The simulated convenience relay has no GS25 session and GS25 takes only its own key: with an expired
    # key (or none) GS25 answers 401/403, which the relay passes on. Our relay token is fine.
    secrets = TEST_SECRETS.model_copy(update={"gs25_api_key": SecretStr(api_key) if api_key else None})
    lambdas.ready(secrets=secrets)

    answer = lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.GS25_STOCK])

    assert answer.status == 503
    assert answer.body["error"]["code"] == "UPSTREAM_ROUTE_UNAVAILABLE"
    assert "GS25 session" in answer.body["error"]["message"]
    assert lambdas.used() == relay_calls(RouteKey.GS25_STOCK)
    expired = [metric for metric in telemetry.metrics() if metric["name"] == "Gs25SessionExpired"]
    assert expired == [
        {
            "namespace": "RouteHealth",
            "name": "Gs25SessionExpired",
            "value": 1.0,
            "dimensions": {"service": "route-health"},
        }
    ]


def test_the_relays_own_401_for_gs25_stock_stays_a_502(lambdas: Lambdas, telemetry: TelemetryOutput) -> None:
    lambdas.ready(secrets=TEST_SECRETS.model_copy(update={"convenience_relay_token": SecretStr("wrong")}))

    answer = lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.GS25_STOCK])

    assert (answer.status, answer.body["error"]["code"]) == (502, "UPSTREAM_BAD_RESPONSE")
    assert "Gs25SessionExpired" not in {metric["name"] for metric in telemetry.metrics()}


def test_the_gs25_api_key_reaches_the_gs25_stock_relay_body_and_nothing_else(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    assert TEST_SECRETS.gs25_api_key is not None
    api_key = TEST_SECRETS.gs25_api_key.get_secret_value()
    lookups = lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{RouteKey.CU_STOCK}", "http-403")  # a failure report and a fallback

    # The simulated relay serves gs25-stock only with this key in the body (it has no GS25 session).
    for endpoint in ENDPOINTS:
        assert lambdas.lookup_endpoint(endpoint).status == 200, endpoint.path
    lambdas.clock.advance(1)
    lambdas.write_verdicts(direct=False)
    lambdas.loaded(lookups)
    for endpoint in ENDPOINTS:
        assert lambdas.lookup_endpoint(endpoint).status == 200, endpoint.path
    wait_for_background(lookups)

    assert lambdas.simulator.calls()["direct:cu-stock"] == 1
    assert lambdas.simulator.calls()["leakedSecrets"] == 0  # no retailer request carried it (nor any other)
    assert api_key not in telemetry.text()
    items = lambdas.dynamodb.scan(TableName=TABLE_NAME)["Items"]
    assert items
    assert api_key not in json.dumps(items)


def test_legacy_mode_without_a_table_uses_the_relay_when_configured(lambdas: Lambdas) -> None:
    lookups = lambdas.deploy(table=False)
    assert lambdas.probe_function.store is None
    assert lookups.snapshots is None
    for key in LEGACY_KEYS:
        assert lambdas.lookup_endpoint(ENDPOINT_OF[key]).status == 200
    assert lambdas.used() == relay_calls(*LEGACY_KEYS)


def test_legacy_mode_without_a_table_or_relay_goes_direct(lambdas: Lambdas) -> None:
    lambdas.deploy(table=False, OY_RELAY_URL="", CONVENIENCE_RELAY_URL="", DTRYX_RELAY_URL="")
    for key in LEGACY_KEYS:
        assert lambdas.lookup_endpoint(ENDPOINT_OF[key]).status == 200
    assert lambdas.used() == direct_calls(*LEGACY_KEYS)
    # GS25 stock needs the relay's app session: with no relay there is no way to answer.
    assert lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.GS25_STOCK]).status == 503


class DynamoCallCounter:
    """Records the DynamoDB API calls made through a client and their threads (botocore event hook)."""

    def __init__(self, client: Any) -> None:
        self.calls: list[tuple[int, str]] = []
        client.meta.events.register("before-call.dynamodb.*", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append((threading.get_ident(), model.name))

    def threads(self, operation: str | None = None) -> set[int]:
        return {thread for thread, name in self.calls if operation in (None, name)}


def test_no_dynamodb_call_on_the_request_path_in_steady_state(lambdas: Lambdas) -> None:
    lookups = lambdas.ready()
    counter = DynamoCallCounter(lambdas.dynamodb)
    request_thread = threading.get_ident()

    for index in range(60):
        assert lambdas.lookup_endpoint(ENDPOINTS[index % len(ENDPOINTS)]).status == 200
        lambdas.clock.advance(250)  # 15 s in all: the snapshot stays fresh

    assert counter.threads("Query") == set()  # the fresh snapshot is not read again
    assert request_thread not in counter.threads()  # daily quota counts are flushed in the background
    # Past the 30 s TTL the snapshot is refreshed, but in the background, never on the request's thread.
    lambdas.clock.advance(30_000)
    for endpoint in ENDPOINTS[:5]:
        assert lambdas.lookup_endpoint(endpoint).status == 200
    wait_for_background(lookups)
    assert counter.threads("Query"), "the stale snapshot was refreshed"
    assert counter.threads("UpdateItem"), "the daily quota counts were flushed"
    assert request_thread not in counter.threads()


def test_an_unexpected_error_is_a_bare_500_that_the_unexpected_errors_alarm_counts(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch, telemetry: TelemetryOutput
) -> None:
    monkeypatch.setattr(lambdas.deploy().router, "route_operation", explode)
    answer = lambdas.lookup("/api/gs25/products", {"keyword": "콜라"})

    assert answer.status == 500
    assert answer.body == error_body("INTERNAL_ERROR", "Something went wrong; try again later.")
    counted = {(m["name"], m["dimensions"].get("Code")) for m in telemetry.metrics()}
    assert counted >= {("UnexpectedError", None), ("LookupError", "INTERNAL_ERROR")}
    [logged] = [log for log in telemetry.logs() if log["message"] == "unexpected error"]
    assert logged["error_type"] == "RuntimeError"


def test_params_the_operation_refuses_are_a_400_naming_the_field() -> None:
    with pytest.raises(InvalidParams) as raised:
        operation_params(RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "67"})

    response = api.api_error(raised.value)

    assert response.status_code == 400
    body = json.loads(str(response.body))
    assert body["error"]["code"] == "INVALID_INPUT"
    assert [item["field"] for item in body["error"]["fields"]] == ["cinemaCode"]


def test_korean_text_is_sent_as_utf8_not_escaped(lambdas: Lambdas) -> None:
    lambdas.ready()

    result = api.lambda_handler(
        api_event("GET", "/api/gs25/products", query={"keyword": "코카콜라"}, now_ms=NOW), lambdas.context
    )

    assert result["statusCode"] == 200
    assert "\\u" not in result["body"]
    assert "콜라" in result["body"]


def test_a_200_body_is_the_compact_json_envelope(lambdas: Lambdas) -> None:
    # The answer is serialized once, by the handler (not re-validated and re-serialized by Powertools): the
    # same bytes the standard library's compact, unescaped JSON would give, numbers included.
    lambdas.ready()
    query = {"productId": "8800362322138", "lat": "37.5635", "lon": "126.9839"}

    result = api.lambda_handler(
        api_event("GET", "/api/oliveyoung/stock", query=query, now_ms=NOW), lambdas.context
    )

    assert result["statusCode"] == 200
    assert result["headers"]["Content-Type"] == "application/json"
    body = json.loads(result["body"])
    assert body["success"] is True
    assert any(isinstance(store["latitude"], float) for store in body["data"]["stores"])
    assert result["body"] == json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def test_a_lookups_log_lines_carry_its_request_id_as_correlation_id(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.write_verdicts(direct=False, relays_healthy=False)
    lambdas.loaded(lambdas.deploy())
    event = api_event("GET", "/api/cu/products", query={"keyword": "레쓰비"}, now_ms=NOW)

    assert api.lambda_handler(event, lambdas.context)["statusCode"] == 503

    [line] = [log for log in telemetry.logs() if log["message"] == "route unavailable"]
    assert line["correlation_id"] == event["requestContext"]["requestId"]
    assert line["function_request_id"] == lambdas.context.aws_request_id
