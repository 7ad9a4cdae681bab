"""The sandbox's own parts, without the handlers: clock, scheduler, gateway events, controls, store proxy."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest
from botocore.config import Config

from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.core.errors import StoreError
from functions.core.model import PROBE_SLOT_MS, RelayGroup, RouteCheck, RouteKey
from sandbox.clock import SandboxClock
from sandbox.controls import SandboxControls
from sandbox.embedded_aws import EmbeddedAws, StoreFault
from sandbox.gateway import (
    SOURCE_IP_HEADER,
    LambdaContext,
    Route,
    http_api_event,
    http_response,
    match_route,
)
from sandbox.scheduler import ProbeScheduler, scheduled_event, slot_start
from sandbox.simulator.faults import Fault
from tests.support.clock import ManualClock
from tests.support.sandbox_gateway import Invoke
from tests.support.sandbox_gateway import gateway_over as serving_gateway


def fixed_clock(start: int) -> SandboxClock:
    """A SandboxClock whose real-time part stands still, so tests are deterministic."""
    return SandboxClock(real_time=ManualClock(start))


# --- clock -------------------------------------------------------------------------------------------------


def test_clock_advances_forward_only() -> None:
    clock = SandboxClock()
    before = clock()
    after = clock.advance(60_000)
    assert after - before >= 60_000
    assert clock.offset_ms == 60_000
    with pytest.raises(ValueError, match="forward"):
        clock.advance(-1)


# --- scheduler ---------------------------------------------------------------------------------------------

SLOT = 1_700_000_100_000 - 1_700_000_100_000 % PROBE_SLOT_MS


def test_scheduled_event_is_eventbridge_shaped() -> None:
    event = scheduled_event(SLOT, region="ap-northeast-2")
    assert event["detail-type"] == "Scheduled Event"
    assert event["source"] == "aws.events"
    assert event["detail"] == {}
    assert event["region"] == "ap-northeast-2"
    assert event["time"].endswith(":00Z")
    assert event["resources"][0].startswith("arn:aws:events:ap-northeast-2:")
    assert {"version", "id", "account"} <= event.keys()


def test_scheduler_fires_once_per_slot_boundary() -> None:
    clock = fixed_clock(SLOT + 1_000)
    fired: list[dict[str, Any]] = []

    def invoke(event: dict[str, Any]) -> Mapping[str, Any]:
        fired.append(event)
        return {"ran": True}

    scheduler = ProbeScheduler(clock, invoke, region="ap-northeast-2")
    assert scheduler.run_due() == {"ran": True}  # start
    assert scheduler.run_due() is None  # same slot
    clock.advance(PROBE_SLOT_MS - 2_000)
    assert scheduler.run_due() is None  # still the same slot
    clock.advance(1_000)  # exactly on the next boundary
    assert scheduler.run_due() == {"ran": True}
    clock.advance(3 * PROBE_SLOT_MS)  # several boundaries at once: one run, for the current slot
    assert scheduler.run_due() == {"ran": True}
    assert [e["time"] for e in fired] == [
        scheduled_event(SLOT, region="r")["time"],
        scheduled_event(SLOT + PROBE_SLOT_MS, region="r")["time"],
        scheduled_event(SLOT + 4 * PROBE_SLOT_MS, region="r")["time"],
    ]
    assert scheduler.fire_now() == {"ran": True}
    assert len(fired) == 4


def test_scheduler_thread_fires_and_stops() -> None:
    fired = threading.Event()

    def invoke(event: dict[str, Any]) -> Mapping[str, Any]:
        fired.set()
        return {}

    scheduler = ProbeScheduler(SandboxClock(), invoke, region="r", poll_interval_s=0.01)
    scheduler.start()
    assert fired.wait(5)
    scheduler.stop()
    assert not any(t.name == "probe-scheduler" for t in threading.enumerate())


def test_a_clock_move_gets_the_probe_it_made_due_despite_the_scheduler_thread() -> None:
    """The move and the firing share the scheduler's lock: a fast-polling background thread never takes the
    slot between them, so POST /_sandbox/clock always reports the probe that ran."""
    clock = fixed_clock(SLOT + 1_000)
    fired: list[str] = []

    def invoke(event: dict[str, Any]) -> Mapping[str, Any]:
        fired.append(threading.current_thread().name)
        return {"ran": True}

    scheduler = ProbeScheduler(clock, invoke, region="r", poll_interval_s=0.0001)
    handle = SandboxControls(
        clock=clock,
        store=FakeStore(),
        simulator=None,
        fire_probe=scheduler.fire_now,
        advance_clock=scheduler.advance,
    )
    assert scheduler.run_due() == {"ran": True}
    scheduler.start()
    try:
        for _ in range(300):
            moved = handle("POST", "/_sandbox/clock", b'{"advanceMs": 300000}')
            assert isinstance(moved.body, dict)
            assert moved.body["probe"] == {"ran": True}
    finally:
        scheduler.stop()
    assert len(fired) == 301
    assert "probe-scheduler" not in fired  # the clock never moved by itself: only the moves fired


def test_slot_start_floors_to_five_minutes() -> None:
    assert slot_start(SLOT + PROBE_SLOT_MS - 1) == SLOT
    assert slot_start(SLOT + PROBE_SLOT_MS) == SLOT + PROBE_SLOT_MS


# --- gateway events ----------------------------------------------------------------------------------------


def test_http_api_event_payload_v2() -> None:
    event = http_api_event(
        route=Route("GET /api/{proxy+}", "api", {"proxy": "cu/products"}),
        method="GET",
        target="/api/cu/products?keyword=%EC%BD%9C%EB%9D%BC&limit=5&tag=a&tag=b",
        headers=[("Host", "127.0.0.1:8080"), ("X-Health-Check-Key", "k"), ("Accept", "a"), ("accept", "b")],
        body=b"",
        source_ip="127.0.0.1",
        now_ms=SLOT,
    )
    assert event["version"] == "2.0"
    assert event["rawPath"] == "/api/cu/products"
    assert event["rawQueryString"] == "keyword=%EC%BD%9C%EB%9D%BC&limit=5&tag=a&tag=b"
    assert event["queryStringParameters"] == {"keyword": "콜라", "limit": "5", "tag": "a,b"}
    assert event["headers"]["x-health-check-key"] == "k"
    assert event["headers"]["accept"] == "a,b"
    assert event["routeKey"] == event["requestContext"]["routeKey"] == "GET /api/{proxy+}"
    assert event["pathParameters"] == {"proxy": "cu/products"}
    assert event["requestContext"]["http"] == {
        "method": "GET",
        "path": "/api/cu/products",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "",
    }
    assert event["requestContext"]["timeEpoch"] == SLOT
    assert event["isBase64Encoded"] is False
    assert "body" not in event


def test_http_api_event_health_route_and_bodies() -> None:
    def health_check_posting(body: bytes) -> dict[str, Any]:
        route = Route("POST /api/health/routes", "ops")
        target = "/api/health/routes"
        return http_api_event(
            route=route, method="POST", target=target, headers=[], body=body, source_ip="1", now_ms=0
        )

    text = health_check_posting(b'{"a":1}')
    assert text["routeKey"] == "POST /api/health/routes"
    assert text["body"] == '{"a":1}'
    assert "queryStringParameters" not in text
    assert "pathParameters" not in text
    binary = health_check_posting(b"\xff\x00")
    assert binary["isBase64Encoded"] is True
    assert binary["body"] == "/wA="


UNROUTED = {
    "POST": ["/api/health/routes/cu-stock/override", "/api/cu/products"],
    "PUT": ["/api/health/routes//override", "/api/health/routes/a/b/override", "/api/health/routes"],
    "DELETE": ["/api/health/routes/cu-stock", "/api/health/routes"],
    "HEAD": ["/api/cu/products"],
    "OPTIONS": ["/api/cu/products"],
    "GET": ["/api/", "/api", "/elsewhere"],
}
"""Requests no deployed route takes, by method."""


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/api/health/routes", Route("GET /api/health/routes", "ops")),
        ("POST", "/api/health/routes", Route("POST /api/health/routes", "ops")),
        ("GET", "/api/cu/products", Route("GET /api/{proxy+}", "api", {"proxy": "cu/products"})),
        ("GET", "/api/health/routes/x", Route("GET /api/{proxy+}", "api", {"proxy": "health/routes/x"})),
        (
            "PUT",
            "/api/health/routes/cu-stock/override",
            Route("PUT /api/health/routes/{key}/override", "ops", {"key": "cu-stock"}),
        ),
        (
            "DELETE",
            "/api/health/routes/no-such-key/override",
            Route("DELETE /api/health/routes/{key}/override", "ops", {"key": "no-such-key"}),
        ),
        (
            "GET",
            "/api/health/routes/cu-stock/override",
            Route("GET /api/{proxy+}", "api", {"proxy": "health/routes/cu-stock/override"}),
        ),
        *[(method, path, None) for method, paths in UNROUTED.items() for path in paths],
    ],
)
def test_routes_are_the_deployed_http_apis(method: str, path: str, expected: Route | None) -> None:
    assert match_route(method, path) == expected


@contextlib.contextmanager
def gateway_over(api: Invoke, ops: Invoke, mcp: Invoke) -> Iterator[httpx.Client]:
    """A sandbox gateway on a free port in front of these functions, and a client to it."""
    with serving_gateway(api, ops, mcp, clock=fixed_clock(SLOT)) as http:
        yield http


def test_gateway_answers_unrouted_requests_like_api_gateway_without_invoking() -> None:
    invoked: list[tuple[str, str]] = []

    def function(name: str) -> Any:
        def invoke(event: dict[str, Any]) -> Any:
            invoked.append((name, event["routeKey"]))
            return {"statusCode": 200, "body": "{}"}

        return invoke

    with gateway_over(function("api"), function("ops"), function("mcp")) as http:
        for method, path in [
            ("POST", "/api/cu/products"),
            ("DELETE", "/api/health/routes"),
            ("GET", "/x"),
            ("PUT", "/mcp"),
        ]:
            response = http.request(method, path)
            assert response.status_code == 404, (method, path)
            assert response.json() == {"message": "Not Found"}
        assert invoked == []
        assert http.get("/api/cu/products").status_code == 200
        assert http.post("/api/health/routes").status_code == 200
        answer = http.get("/api/health/routes")
        assert answer.status_code == 200
        assert http.put("/api/health/routes/cu-stock/override").status_code == 200
        assert http.delete("/api/health/routes/cu-stock/override").status_code == 200
        for method in ("POST", "GET", "DELETE"):
            assert http.request(method, "/mcp").status_code == 200
    assert invoked == [
        ("api", "GET /api/{proxy+}"),
        ("ops", "POST /api/health/routes"),
        ("ops", "GET /api/health/routes"),
        ("ops", "PUT /api/health/routes/{key}/override"),
        ("ops", "DELETE /api/health/routes/{key}/override"),
        ("mcp", "POST /mcp"),
        ("mcp", "GET /mcp"),
        ("mcp", "DELETE /mcp"),
    ]
    # The Date header is the sandbox clock's (operator tools tell "3 min ago" by it), not the machine's.
    assert parsedate_to_datetime(answer.headers["date"]).timestamp() * 1000 == SLOT


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("TRACE", "/api/cu/products", b""),
        ("TRACE", "/api/health/routes", b""),
        ("QUERY", "/api/cu/products", b'{"keyword": "cola"}'),
        ("PROPFIND", "/api/health/routes/cu-stock/override", b""),
        ("BREW", "/elsewhere", b"coffee"),
    ],
)
def test_gateway_answers_a_method_it_has_no_route_for_like_any_unmatched_route(
    method: str, path: str, body: bytes
) -> None:
    invoked: list[dict[str, Any]] = []

    def function(event: dict[str, Any]) -> Any:
        invoked.append(event)
        return {"statusCode": 200, "body": "{}"}

    with gateway_over(function, function, function) as http:
        response = http.request(method, path, content=body)
        assert (response.status_code, response.json()) == (404, {"message": "Not Found"})
        assert response.headers["content-type"] == "application/json"
        assert http.get("/api/cu/products").status_code == 200  # the connection still serves
    assert [event["requestContext"]["http"]["method"] for event in invoked] == ["GET"]


def test_a_request_may_choose_its_source_ip_in_the_sandbox_only() -> None:
    events: list[dict[str, Any]] = []

    def api(event: dict[str, Any]) -> Any:
        events.append(event)
        return {"statusCode": 200, "body": "{}"}

    with gateway_over(api, api, api) as http:
        assert http.get("/api/cu/products").status_code == 200
        assert http.get("/api/cu/products", headers={SOURCE_IP_HEADER: "203.0.113.7"}).status_code == 200
        assert http.get("/api/cu/products", headers={SOURCE_IP_HEADER: "2001:db8::1"}).status_code == 200
        refused = http.get("/api/cu/products", headers={SOURCE_IP_HEADER: "localhost"})
        assert refused.status_code == 400
        assert refused.json() == {"message": f"{SOURCE_IP_HEADER} must be an IP address"}
    assert [event["requestContext"]["http"]["sourceIp"] for event in events] == [
        "127.0.0.1",
        "203.0.113.7",
        "2001:db8::1",
    ]
    assert all(SOURCE_IP_HEADER not in event["headers"] for event in events)


def test_http_response_from_handler_results() -> None:
    status, headers, body = http_response(
        {
            "statusCode": 429,
            "headers": {"Retry-After": "30"},
            "body": '{"success": false}',
            "isBase64Encoded": False,
        }
    )
    assert (status, headers, body) == (429, [("Retry-After", "30")], b'{"success": false}')
    assert http_response({"plain": 1}) == (200, [("content-type", "application/json")], b'{"plain": 1}')
    assert http_response({"statusCode": 200, "body": "aGk=", "isBase64Encoded": True})[2] == b"hi"


def test_lambda_context_has_what_powertools_reads() -> None:
    context = LambdaContext(function_name="route-health-api", timeout_s=10)
    assert 0 < context.get_remaining_time_in_millis() <= 10_000
    assert context.invoked_function_arn.endswith(":function:route-health-api")
    assert context.aws_request_id


# --- controls ----------------------------------------------------------------------------------------------


class FakeSimulator:
    def __init__(self) -> None:
        self.faults: dict[str, str] = {}
        self.parsed: dict[str, Fault] = {}

    def set_fault(self, target: str, fault: Fault) -> None:
        self.faults[target] = fault.name
        self.parsed[target] = fault

    def clear_faults(self) -> None:
        self.faults.clear()

    def calls(self) -> Mapping[str, int]:
        return {"direct:cu-store": 2, "leakedSecrets": 0}


class FakeRelays:
    def __init__(self) -> None:
        self.restarted: list[RelayGroup] = []

    def urls(self) -> Mapping[RelayGroup, str]:
        return {RelayGroup.DTRYX: "http://127.0.0.1:4999"}

    def restart(self, group: RelayGroup) -> str:
        self.restarted.append(group)
        return self.urls()[group]


class FakeStore:
    def __init__(self) -> None:
        self.fault: StoreFault | None = None

    def set_store_fault(self, fault: StoreFault | None) -> None:
        self.fault = fault


@pytest.fixture
def controls() -> tuple[SandboxControls, FakeSimulator, FakeStore, list[str]]:
    simulator, store, probes = FakeSimulator(), FakeStore(), []
    clock = fixed_clock(SLOT)

    def advance(ms: int) -> Mapping[str, Any] | None:
        clock.advance(ms)
        probes.append("due")
        return {"ran": True}

    return (
        SandboxControls(
            clock=clock,
            store=store,
            simulator=simulator,
            fire_probe=lambda: {"ran": False},
            advance_clock=advance,
            relays=FakeRelays(),
        ),
        simulator,
        store,
        probes,
    )


def test_controls_faults(controls: tuple[SandboxControls, FakeSimulator, FakeStore, list[str]]) -> None:
    handle, simulator, store, _ = controls
    assert (
        handle("POST", "/_sandbox/faults", b'{"target": "direct:cu-store", "fault": "http-403"}').status
        == 200
    )
    assert handle("POST", "/_sandbox/faults", b'{"target": "relay:dtryx", "fault": "slow-250"}').status == 200
    assert (
        handle("POST", "/_sandbox/faults", b'{"target": "relay:oliveyoung", "fault": "slow-60000"}').status
        == 200
    )
    assert handle("POST", "/_sandbox/faults", b'{"target": "store", "fault": "timeout"}').status == 200
    assert simulator.faults == {
        "direct:cu-store": "http-403",
        "relay:dtryx": "slow-250",
        "relay:oliveyoung": "slow-60000",
    }
    assert store.fault is StoreFault.TIMEOUT
    assert handle("DELETE", "/_sandbox/faults", b"").status == 200
    assert simulator.faults == {}
    assert store.fault is None


def test_controls_respond_and_relay_upstream_faults(
    controls: tuple[SandboxControls, FakeSimulator, FakeStore, list[str]],
) -> None:
    handle, simulator, _, _ = controls
    respond = b'{"target": "relay-upstream:cu-store", "fault": "respond", "status": 503, "body": "<p>", '
    assert handle("POST", "/_sandbox/faults", respond + b'"contentType": "text/html"}').status == 200
    fault = simulator.parsed["relay-upstream:cu-store"]
    assert (fault.name, fault.status, fault.body, fault.content_type) == ("respond", 503, b"<p>", "text/html")
    assert (
        handle(
            "POST", "/_sandbox/faults", b'{"target": "direct:cu-store", "fault": "respond", "status": 200}'
        ).status
        == 200
    )
    assert simulator.parsed["direct:cu-store"].content_type == "application/json"


def test_controls_relays_and_restart(
    controls: tuple[SandboxControls, FakeSimulator, FakeStore, list[str]],
) -> None:
    handle = controls[0]
    assert handle("GET", "/_sandbox/relays", b"").body == {"dtryx": "http://127.0.0.1:4999"}
    restarted = handle("POST", "/_sandbox/relays/restart", b'{"group": "dtryx"}')
    assert (restarted.status, restarted.body) == (200, {"group": "dtryx", "url": "http://127.0.0.1:4999"})
    for bad in (b'{"group": "oliveyoung"}', b'{"group": "daiso"}', b"{}", b'{"group": "dtryx", "x": 1}'):
        assert handle("POST", "/_sandbox/relays/restart", bad).status == 400, bad
    assert handle("GET", "/_sandbox/relays/restart", b"").status == 405


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "JSON"),
        (b"[1]", "object"),
        (b'{"target": "direct:nope", "fault": "ok"}', "unknown fault target"),
        (b'{"target": "relay:cu", "fault": "ok"}', "unknown fault target"),
        (b'{"target": "direct:cu-store", "fault": "http-418"}', "unknown fault"),
        (b'{"target": "direct:cu-store", "fault": "slow-"}', "unknown fault"),
        (b'{"target": "direct:cu-store", "fault": "slow-60001"}', "unknown fault"),  # the simulator's cap
        (b'{"target": "relay:dtryx", "fault": "slow-999999"}', "unknown fault"),
        (b'{"target": "store", "fault": "http-500"}', "does not apply to the store"),
        (b'{"target": "store"}', "fault"),
        (b'{"target": "store", "fault": "refuse", "extra": 1}', "extra"),
        (b'{"target": "direct:cu-store", "fault": "respond"}', "status from 200 to 599"),
        (b'{"target": "direct:cu-store", "fault": "respond", "status": "200"}', "status"),
        (b'{"target": "direct:cu-store", "fault": "http-500", "status": 200}', "only with the respond fault"),
        (b'{"target": "relay-upstream:nope", "fault": "ok"}', "unknown fault target"),
    ],
)
def test_controls_reject_bad_faults(
    controls: tuple[SandboxControls, FakeSimulator, FakeStore, list[str]], body: bytes, message: str
) -> None:
    answer = controls[0]("POST", "/_sandbox/faults", body)
    assert answer.status == 400
    assert message in json.dumps(answer.body)


def test_controls_clock_probe_calls(
    controls: tuple[SandboxControls, FakeSimulator, FakeStore, list[str]],
) -> None:
    handle, _, _, probes = controls
    moved = handle("POST", "/_sandbox/clock", b'{"advanceMs": 300000}')
    assert moved.status == 200
    assert isinstance(moved.body, dict)
    assert moved.body["now"] == SLOT + 300_000
    assert moved.body["probe"] == {"ran": True}
    assert probes == ["due"]
    for bad in (b'{"advanceMs": -1}', b'{"advanceMs": "5"}', b'{"advanceMs": 1.5}', b"{}", b'{"advance": 1}'):
        assert handle("POST", "/_sandbox/clock", bad).status == 400, bad
    assert handle("POST", "/_sandbox/probe", b"").body == {"ran": False}
    assert handle("POST", "/_sandbox/probe", b'{"x": 1}').status == 400
    assert handle("GET", "/_sandbox/calls", b"").body == {"direct:cu-store": 2, "leakedSecrets": 0}
    assert handle("GET", "/_sandbox/probe", b"").status == 405
    assert handle("GET", "/_sandbox/nothing", b"").status == 404


def test_controls_without_simulator_explain_why() -> None:
    handle = SandboxControls(
        clock=fixed_clock(SLOT),
        store=FakeStore(),
        simulator=None,
        fire_probe=dict,
        advance_clock=lambda ms: None,
    )
    answer = handle("GET", "/_sandbox/calls", b"")
    assert answer.status == 400
    assert "--upstream real" in json.dumps(answer.body)


# --- embedded AWS and the store fault proxy ----------------------------------------------------------------


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws({"HEALTH_CHECK_SECRET": "s3cr3t-value"}) as embedded:
        yield embedded


def _store_through_proxy(aws: EmbeddedAws) -> DynamoVerdictStore:
    import boto3

    client = boto3.client(
        "dynamodb",
        endpoint_url=aws.dynamodb_url,
        region_name="ap-northeast-2",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        # Generous for the healthy reads on a loaded runner; a faulted read fails by reset or by this timeout.
        config=Config(connect_timeout=2, read_timeout=2, retries={"total_max_attempts": 1}),
    )
    return DynamoVerdictStore(aws.table_name, client)


def test_embedded_aws_serves_the_table_and_secret(aws: EmbeddedAws) -> None:
    env = aws.environment()
    assert env["AWS_ENDPOINT_URL_DYNAMODB"].startswith("http://127.0.0.1:")
    assert env["AWS_ENDPOINT_URL_SECRETSMANAGER"].startswith("http://127.0.0.1:")
    assert env["ROUTE_HEALTH_TABLE"] == aws.table_name
    secret = aws.secretsmanager_client().get_secret_value(SecretId=env["ROUTE_HEALTH_SECRET_ID"])
    assert json.loads(secret["SecretString"]) == {"HEALTH_CHECK_SECRET": "s3cr3t-value"}
    store = _store_through_proxy(aws)
    store.write_checks([RouteCheck(RouteKey.CU_STORE, True, SLOT)], [], now=SLOT)
    assert store.read_snapshot().routes[RouteKey.CU_STORE].direct is True


def test_a_second_embedded_aws_in_the_process_keeps_its_own_table_and_secret(aws: EmbeddedAws) -> None:
    # moto's servers share one process's accounts (the integration tests' session runs beside this module's).
    with EmbeddedAws(
        {"HEALTH_CHECK_SECRET": "other"}, table_name="second", secret_id="second/secret"
    ) as other:
        secret = other.secretsmanager_client().get_secret_value(SecretId=other.secret_id)
        assert json.loads(secret["SecretString"]) == {"HEALTH_CHECK_SECRET": "other"}
        assert other.dynamodb_client().describe_table(TableName="second")["Table"]["TableName"] == "second"
    mine = aws.secretsmanager_client().get_secret_value(SecretId=aws.secret_id)
    assert json.loads(mine["SecretString"]) == {"HEALTH_CHECK_SECRET": "s3cr3t-value"}


@pytest.mark.parametrize("fault", list(StoreFault))
def test_store_fault_makes_dynamodb_unreachable_then_recovers(aws: EmbeddedAws, fault: StoreFault) -> None:
    store = _store_through_proxy(aws)
    store.read_snapshot()  # a pooled connection exists before the fault
    aws.set_store_fault(fault)
    try:
        with pytest.raises(StoreError):
            store.read_snapshot()
    finally:
        aws.set_store_fault(None)
    store.read_snapshot()


def _dropped(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            return sock.recv(10) == b""
    except ConnectionError:  # reset or broken pipe
        return True


def test_refuse_resets_raw_connections(aws: EmbeddedAws) -> None:
    aws.set_store_fault(StoreFault.REFUSE)
    try:
        assert _dropped(aws.dynamodb_url)
    finally:
        aws.set_store_fault(None)
    assert not _dropped(aws.dynamodb_url)
