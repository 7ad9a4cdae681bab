"""docs/design.md, from "Route decision" to "HTTP API" and "Sandbox", over real HTTP against `route-health
sandbox` (the real handlers, embedded AWS, simulated retailers and relays). Each test starts from a settled
sandbox (see conftest `fresh`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from functions.core.model import COOLDOWN_MS, DIRECT_PROBED, PROBE_SLOT_MS

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

DIRECT_KEYS = [key.value for key in DIRECT_PROBED]
TODAY_KST = (datetime.now(UTC) + timedelta(hours=9)).date().isoformat()
CINEMA = {"brandCode": "indieart", "cinemaCode": "000067"}
SEOUL = {"lat": 37.5635, "lon": 126.9839}

# endpoint, query, the upstream calls it must make (all direct, except the pinned gs25-stock)
ENDPOINTS: list[tuple[str, dict[str, Any], set[str]]] = [
    ("/api/oliveyoung/stores", {"keyword": "명동"}, {"direct:oy-find-store"}),
    ("/api/oliveyoung/products", {"keyword": "립밤"}, {"direct:oy-product-search"}),
    ("/api/oliveyoung/products/A000000165760", {}, {"direct:oy-goods-info"}),
    ("/api/oliveyoung/stock", {"productId": "8800362322138", **SEOUL}, {"direct:oy-stock-stores"}),
    ("/api/cu/products", {"keyword": "레쓰비"}, {"direct:cu-prime"}),
    ("/api/cu/stores", SEOUL, {"direct:cu-store"}),
    ("/api/gs25/products", {"keyword": "코카콜라"}, {"direct:gs25-products"}),
    ("/api/gs25/stock", {"itemCode": "8801094082604", **SEOUL}, {"relay:gs25-stock"}),
    ("/api/seveneleven/products", {"keyword": "코카콜라"}, {"direct:seven-goods"}),
    ("/api/seveneleven/stores", {"keyword": "강남"}, {"direct:seven-store"}),
    ("/api/seveneleven/popwords", {}, {"direct:seven-popwords"}),
    ("/api/seveneleven/stock", {"itemCd": "8801056018979", "storeCd": "64676"}, {"direct:seven-stock-meta", "direct:seven-stock"}),
    ("/api/seveneleven/catalog/pages", {}, {"direct:seven-pages"}),
    ("/api/seveneleven/catalog/issues", {}, {"direct:seven-issues"}),
    ("/api/seveneleven/catalog/exhibitions", {}, {"direct:seven-exhibitions"}),
    ("/api/dtryx/movies", CINEMA, {"direct:dtryx-movies"}),
    ("/api/dtryx/play-dates", CINEMA, {"direct:dtryx-play-dates"}),
    ("/api/dtryx/timetable", {**CINEMA, "playDate": TODAY_KST}, {"direct:dtryx-timetable"}),
    ("/api/cgv/theaters", {"keyword": "강남"}, {"direct:cgv-theaters"}),
    ("/api/cgv/movies", {"theaterCode": "0056"}, {"direct:cgv-movies"}),
    ("/api/cgv/timetable", {"theaterCode": "0056"}, {"direct:cgv-timetable"}),
]  # fmt: skip

SEVEN_GOODS = ("/api/seveneleven/products", {"keyword": "코카콜라"})


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["success"] is True
    assert "data" in body
    return body


def _wait_for(condition: Any, what: str, timeout_s: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def test_each_test_starts_just_past_a_slot_start(fresh: Sandbox) -> None:
    """So no scheduled probe fires inside a test (its clock moves are whole slots or well under one)."""
    assert 1_000 <= fresh.now() % PROBE_SLOT_MS < 30_000


def test_initial_verdicts(fresh: Sandbox) -> None:
    health = fresh.health()
    routes, relays = health["routes"], health["relays"]
    assert sorted(key for key, verdict in routes.items() if verdict["direct"] is True) == sorted(DIRECT_KEYS)
    assert routes["gs25-stock"]["direct"] is False
    assert routes["gs25-stock"]["reason"] == "pinned-relay"
    assert {group: relay["healthy"] for group, relay in relays.items()} == {
        "oliveyoung": True,
        "convenience": True,
        "dtryx": True,
        "cgv": True,
    }
    for key, verdict in routes.items():
        assert verdict["key"] == key
        assert isinstance(verdict["checkedAt"], int)


@pytest.mark.parametrize(("path", "params", "expected"), ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_every_lookup_endpoint_is_served_direct(
    fresh: Sandbox, path: str, params: dict[str, Any], expected: set[str]
) -> None:
    response, calls = fresh.lookup(path, params)
    _ok(response)
    assert expected <= calls.keys(), calls
    # Only direct calls (the pinned gs25-stock: only its relay), and never a retailer request for gs25-stock.
    assert {name for name in calls if not name.startswith("direct:")} == {
        name for name in expected if not name.startswith("direct:")
    }, calls
    assert "direct:gs25-stock" not in calls
    # No routing diagnostics in the answer.
    assert not [
        name for name in response.headers if any(w in name.lower() for w in ("route", "relay", "via"))
    ]


def test_403_falls_back_blocks_records_and_recovers_after_the_cooldown(fresh: Sandbox) -> None:
    path, params = SEVEN_GOODS
    fresh.fault("direct:seven-goods", "http-403")

    response, calls = fresh.lookup(path, params)
    _ok(response)
    assert calls == {"direct:seven-goods": 1, "relay:seven-goods": 1}

    response, calls = fresh.lookup(path, params)  # blocked in this container: relay only
    _ok(response)
    assert calls == {"relay:seven-goods": 1}

    def recorded() -> dict[str, Any] | None:
        verdict: dict[str, Any] = fresh.health()["routes"]["seven-goods"]
        return verdict if verdict.get("failedAt") else None

    verdict = _wait_for(recorded, "the failure report to reach the store")
    assert verdict["direct"] is False
    assert verdict["blockedUntil"] - verdict["failedAt"] == COOLDOWN_MS

    fresh.clear_faults()
    moved = fresh.advance(COOLDOWN_MS + 1_000)  # past the cooldown, into a new slot: the probe runs
    assert moved["probe"]["ran"] is True
    assert fresh.health()["routes"]["seven-goods"]["direct"] is True

    def direct_again() -> bool:
        response, calls = fresh.lookup(path, params)
        _ok(response)
        return calls == {"direct:seven-goods": 1}

    _wait_for(direct_again, "lookups to go direct again")


def test_404_passes_through_without_blocking(fresh: Sandbox) -> None:
    fresh.fault("direct:oy-goods-info", "http-404")
    response, calls = fresh.lookup("/api/oliveyoung/products/A000000000000")
    assert response.status_code == 404, response.text
    assert response.json()["success"] is False
    assert calls == {"direct:oy-goods-info": 1}

    fresh.clear_faults()
    response, calls = fresh.lookup("/api/oliveyoung/products/A000000165760")
    _ok(response)
    assert calls == {"direct:oy-goods-info": 1}  # not blocked


@pytest.mark.parametrize(
    ("fault", "key", "path", "params"),
    [
        ("html-200", "gs25-products", "/api/gs25/products", {"keyword": "코카콜라"}),
        ("invalid-json", "cu-store", "/api/cu/stores", SEOUL),
        ("bad-shape", "oy-find-store", "/api/oliveyoung/stores", {"keyword": "명동"}),
        ("oversize", "seven-store", "/api/seveneleven/stores", {"keyword": "강남"}),
        ("timeout", "dtryx-movies", "/api/dtryx/movies", CINEMA),
    ],
)
def test_soft_failures_are_recovered_through_the_relay(
    fresh: Sandbox, fault: str, key: str, path: str, params: dict[str, Any]
) -> None:
    fresh.fault(f"direct:{key}", fault)
    response, calls = fresh.lookup(path, params)
    body = _ok(response)
    assert calls == {f"direct:{key}": 1, f"relay:{key}": 1}
    assert body["data"]  # the relay's real answer, never an empty stand-in


def test_known_bad_route_and_unhealthy_relay_answer_503_without_calling(fresh: Sandbox) -> None:
    fresh.fault("direct:dtryx-movies", "http-500")
    fresh.fault("relay:dtryx", "http-503")
    moved = fresh.advance(COOLDOWN_MS)  # the next scheduled probe sees both bad
    assert moved["probe"]["ran"] is True
    assert moved["probe"]["routes"]["dtryx-movies"]["direct"] is False
    assert moved["probe"]["relays"]["dtryx"]["healthy"] is False
    # Let the lookup container load the new snapshot (the clock move made its copy stale).
    _wait_for(
        lambda: fresh.lookup("/api/seveneleven/popwords")[1] == {"direct:seven-popwords": 1},
        "a fresh snapshot",
    )

    response, calls = fresh.lookup("/api/dtryx/movies", CINEMA)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "UPSTREAM_ROUTE_UNAVAILABLE"
    assert calls == {}


def test_one_probe_per_slot_whatever_triggers_it(fresh: Sandbox) -> None:
    moved = fresh.advance(COOLDOWN_MS)
    assert moved["probe"]["ran"] is True  # the schedule took the new slot

    before = fresh.calls()
    assert fresh.probe()["ran"] is False  # EventBridge redelivery / a second trigger
    assert fresh.probe()["ran"] is False
    response = fresh.http.post("/api/health/routes", headers=fresh.auth())
    assert response.status_code == 429, response.text
    assert 1 <= int(response.headers["Retry-After"]) <= 300
    assert response.json()["data"]["routes"]["cu-store"]["direct"] is True
    assert fresh.calls() == before  # nothing was checked again


def test_operator_endpoint_requires_the_secret(fresh: Sandbox) -> None:
    assert fresh.http.get("/api/health/routes").status_code == 401
    wrong = fresh.http.get("/api/health/routes", headers={"x-health-check-key": "wrong"})
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "UNAUTHORIZED_HEALTH_CHECK"
    assert (
        fresh.http.get("/api/health/routes", headers={"x-health-check-key": fresh.secret}).status_code == 200
    )


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/cu/stores", {"lat": "north"}),
        ("/api/cu/products", {}),
        ("/api/dtryx/timetable", {**CINEMA, "playDate": "20240101"}),
        ("/api/gs25/stock", SEOUL),
        ("/api/oliveyoung/products", {"keyword": "립밤", "size": 0}),
    ],
)
def test_bad_lookup_input_is_400_without_upstream_calls(
    fresh: Sandbox, path: str, params: dict[str, Any]
) -> None:
    fresh.assert_refused_before_any_call(path, params)


def test_bad_operator_and_control_input_is_400(fresh: Sandbox) -> None:
    with_body = fresh.http.post("/api/health/routes", headers=fresh.auth(), json={"force": True})
    assert with_body.status_code == 400
    with_query = fresh.http.post("/api/health/routes?force=1", headers=fresh.auth())
    assert with_query.status_code == 400
    bad_controls = [
        ("POST", "/_sandbox/faults", {"target": "direct:nope", "fault": "http-403"}),
        ("POST", "/_sandbox/faults", {"target": "direct:cu-store", "fault": "http-418"}),
        ("POST", "/_sandbox/faults", {"target": "store", "fault": "html-200"}),
        ("POST", "/_sandbox/clock", {"advanceMs": -5}),
        ("POST", "/_sandbox/clock", {"advanceMs": "soon"}),
    ]
    for method, path, payload in bad_controls:
        response = fresh.http.request(method, path, json=payload)
        assert response.status_code == 400, (path, payload, response.text)
        assert response.json()["error"]
    assert fresh.http.post("/_sandbox/clock", content=b"not json").status_code == 400


@pytest.mark.parametrize("fault", ["refuse", "timeout"])
def test_lookups_keep_answering_during_a_store_outage(fresh: Sandbox, fault: str) -> None:
    path, params = SEVEN_GOODS
    fresh.fault("store", fault)
    try:
        started = time.monotonic()
        response, calls = fresh.lookup(path, params)  # the cached snapshot: still direct
        _ok(response)
        assert calls == {"direct:seven-goods": 1}
        # The cached snapshot goes stale; its refresh cannot reach the store. (Settled 1 s into a slot, so
        # this stays inside it: no scheduled probe runs against the broken store.)
        assert fresh.advance(31_000)["probe"] is None
        for _ in range(3):
            response, calls = fresh.lookup(path, params)  # relay first, never waiting for DynamoDB
            _ok(response)
            assert calls == {"relay:seven-goods": 1}
        assert time.monotonic() - started < 3.0
        if fault == "refuse":  # a timeout would make each of these wait for the store's own timeouts
            health = fresh.http.get("/api/health/routes", headers=fresh.auth())
            assert health.status_code == 503
            assert health.json()["error"]["code"] == "ROUTE_HEALTH_FAILED"
            assert fresh.probe()["ran"] is False
    finally:
        fresh.clear_faults()
    fresh.settle()
    assert fresh.health()["routes"]["seven-goods"]["direct"] is True


def test_unknown_paths(sandbox: Sandbox) -> None:
    assert sandbox.http.get("/nothing-here").status_code == 404
    assert sandbox.http.get("/_sandbox/nothing").status_code == 404
    assert sandbox.http.get("/_sandbox/probe").status_code == 405
    assert sandbox.http.get("/api/nothing-here").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/cu/products"), ("DELETE", "/api/health/routes"), ("PUT", "/api/health/routes")],
)
def test_routes_the_deployed_api_does_not_have_are_api_gateways_404(
    sandbox: Sandbox, method: str, path: str
) -> None:
    response = sandbox.http.request(method, path, headers=sandbox.auth())
    assert response.status_code == 404
    assert response.json() == {"message": "Not Found"}  # API Gateway's own answer, not a handler's envelope


def test_no_secret_leaked(sandbox: Sandbox) -> None:
    """No retailer saw a relay credential and the operator secret is not in the output, so far. The session
    fixture checks the same once every test has run, whatever the order."""
    sandbox.assert_nothing_leaked()
