"""The simulated retailers, and the fronts of the reference relays behind them, over real HTTP on 127.0.0.1:
faults, counts, leaks, concurrency."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from functions.adapters.direct import DirectTransport
from functions.adapters.http import PER_HOST_LIMITS, new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import CATALOG, cgv
from functions.core import (
    DIRECT_PROBED,
    MAX_BODY_BYTES,
    ApiError,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteFailure,
    RouteKey,
    UpstreamRejected,
    group_of,
)
from relay.app import POLICIES
from relay.logs import RelayLog
from sandbox.relays import SimulatedUpstreams, start_upstreams
from sandbox.simulator.faults import FaultRegistry, parse_fault, parse_target
from sandbox.simulator.payloads import realistic_payload
from sandbox.simulator.routes import RELAY_OPERATIONS, relay_route, retailer_route
from sandbox.simulator.server import SimRequest, Simulator, SimulatorServer, loopback_transport
from tests.support.clock import RelayClock
from tests.support.core_fakes import RecordingRelayEvents

NOW = 1_750_000_000_000
DEADLINE_MS = 1_000  # generous: a busy shared machine must not turn a quick answer into a timeout
CREDENTIALS = {
    RelayGroup.OLIVEYOUNG: RelayCredentials("oy-token-1", "oy-access-id", "oy-access-secret"),
    RelayGroup.CONVENIENCE: RelayCredentials("conv-token-2", api_key="gs25-api-key-4"),
    RelayGroup.DTRYX: RelayCredentials("dtryx-token-3"),
    RelayGroup.CGV: RelayCredentials("dtryx-token-3"),  # the Dtryx relay serves CGV
}
SIGNING_KEYS = {cgv.SIGNING_KEY: "cgv-signing-key-5"}
SECRETS = (
    "oy-token-1",
    "oy-access-id",
    "oy-access-secret",
    "conv-token-2",
    "dtryx-token-3",
    "gs25-api-key-4",
    "cgv-signing-key-5",
)


def stub_payload(key: RouteKey, request_input: Mapping[str, Any]) -> object:
    return {"stub": str(key), "input": dict(request_input)}


def bad_shape(key: RouteKey) -> object:
    return {"status": "SUCCESS", "success": True, "RetCode": "success", "data": {}}


def stub_simulator() -> Simulator:
    return Simulator(
        CREDENTIALS, signing_keys=SIGNING_KEYS, hang_limit_s=5.0, realistic=stub_payload, bad_shape=bad_shape
    )


# Starting the servers and the three relays, and stopping them, costs more than most tests here: they start
# once per module and each test gets them reset (`fresh`).


@pytest.fixture(scope="module")
def relay_clock() -> RelayClock:
    return RelayClock(lambda: NOW)


@pytest.fixture(scope="module")
def stub_upstreams(relay_clock: RelayClock) -> Iterator[SimulatedUpstreams]:
    """The simulator answering stub payloads, with a reference relay per group behind its fronts."""
    with start_upstreams(stub_simulator(), CREDENTIALS, clock=relay_clock, log=RelayLog(io.StringIO())) as up:
        yield up


@pytest.fixture(scope="module")
def real_upstreams(relay_clock: RelayClock) -> Iterator[SimulatedUpstreams]:
    """The same, answering the realistic payloads."""
    with start_upstreams(
        Simulator(CREDENTIALS, signing_keys=SIGNING_KEYS),
        CREDENTIALS,
        clock=relay_clock,
        log=RelayLog(io.StringIO()),
    ) as up:
        yield up


def fresh(upstreams: SimulatedUpstreams, relay_clock: RelayClock) -> SimulatedUpstreams:
    """`upstreams` as if just started: no faults, no hanging requests, every count at zero, and the relays a
    week on (fresh quota windows, nothing cached)."""
    upstreams.simulator.reset()
    relay_clock.next_test()
    return upstreams


@pytest.fixture
def simulator(stub_upstreams: SimulatedUpstreams, relay_clock: RelayClock) -> Simulator:
    return fresh(stub_upstreams, relay_clock).simulator


@pytest.fixture
def server(stub_upstreams: SimulatedUpstreams, simulator: Simulator) -> SimulatorServer:
    """`simulator` on 127.0.0.1, with a reference relay per group behind its fronts."""
    return stub_upstreams.server


@pytest.fixture
def real(real_upstreams: SimulatedUpstreams, relay_clock: RelayClock) -> SimulatedUpstreams:
    return fresh(real_upstreams, relay_clock)


@pytest.fixture
def client(server: SimulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=DEADLINE_MS / 1000) as plain:
        yield plain


SHARED_RELAY_CLIENT = new_http_client()


def direct(server: SimulatorServer, keys: Mapping[str, str] = SIGNING_KEYS) -> DirectTransport:
    return DirectTransport(new_http_client(loopback_transport(server.base_url)), keys=keys.get)


def relays(
    server: SimulatorServer, credentials: Mapping[RelayGroup, RelayCredentials] = CREDENTIALS
) -> RelayTransport:
    endpoints = {
        group: RelayEndpoint.parse(group, server.relay_url(group), creds)
        for group, creds in credentials.items()
    }
    return RelayTransport(SHARED_RELAY_CLIENT, endpoints, clock=lambda: NOW, events=RecordingRelayEvents())


def direct_reason(server: SimulatorServer, key: RouteKey = RouteKey.OY_FIND_STORE) -> Reason:
    spec = CATALOG[key]
    with pytest.raises(RouteFailure) as caught:
        direct(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    return caught.value.reason


OY_FIND_STORE_PATH = "/www.oliveyoung.co.kr/oystore/api/storeFinder/find-store"


# --- routing tables --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(RouteKey))
def test_every_catalog_url_maps_back_to_its_key(key: RouteKey) -> None:
    spec = CATALOG[key]
    url = httpx.URL(spec.build_request(spec.probe_params(NOW)).url)
    assert url.scheme == "https"
    assert retailer_route(url.host, url.path) is key


@pytest.mark.parametrize("key", list(RouteKey))
def test_every_relay_operation_maps_back_to_its_key(key: RouteKey) -> None:
    assert relay_route(group_of(key), CATALOG[key].relay_operation) is key


def test_relay_operation_tables_cover_each_group_exactly() -> None:
    assert {key for ops in RELAY_OPERATIONS.values() for key in ops.values()} == set(RouteKey)


# --- fault registry ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        "ok",
        "http-400",
        "http-429",
        "http-503",
        "timeout",
        "refuse",
        "html-200",
        "invalid-json",
        "bad-shape",
        "oversize",
        "slow-0",
        "slow-2500",
    ],
)
def test_documented_faults_parse(fault: str) -> None:
    assert parse_fault(fault).name == fault


@pytest.mark.parametrize("fault", ["http-418", "http-200", "slow-", "slow--1", "slow-99999999", "boom", ""])
def test_unknown_faults_are_refused(fault: str) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        parse_fault(fault)


@pytest.mark.parametrize(
    "target", ["direct:nope", "relay:daiso", "store", "direct", "oy-find-store", "relay:"]
)
def test_unknown_targets_are_refused(target: str) -> None:
    with pytest.raises(ValueError, match="unknown fault target"):
        parse_target(target)


def test_registry_set_ok_and_clear() -> None:
    registry = FaultRegistry()
    registry.set("direct:cu-store", "http-500")
    registry.set("relay:dtryx", "slow-20")
    assert registry.get("direct:cu-store").status == 500
    assert registry.get("relay:dtryx").delay_ms == 20
    registry.set("direct:cu-store", "ok")
    assert registry.get("direct:cu-store").name == "ok"
    assert registry.get("relay:dtryx").name == "slow-20"
    registry.clear()
    assert registry.get("relay:dtryx").name == "ok"


# --- retailer faults through the real direct transport -----------------------------------------


FAULT_REASONS = {
    "http-401": Reason.HTTP_401,
    "http-403": Reason.HTTP_403,
    "http-429": Reason.HTTP_429,
    "http-502": Reason.HTTP_5XX,
    "timeout": Reason.TIMEOUT,
    "refuse": Reason.NETWORK_ERROR,
    "html-200": Reason.INVALID_RESPONSE,
    "invalid-json": Reason.INVALID_RESPONSE,
    "oversize": Reason.RESPONSE_TOO_LARGE,
    "slow-1500": Reason.TIMEOUT,
}
"""What a fault in front of a retailer or a relay reads as, where the two agree."""


@pytest.mark.parametrize(
    ("fault", "reason"),
    {
        **FAULT_REASONS,
        "http-500": Reason.HTTP_5XX,
        "http-503": Reason.HTTP_5XX,
        "bad-shape": Reason.SHAPE,
    }.items(),
)
def test_retailer_faults_reach_the_direct_transport_as_reasons(
    server: SimulatorServer, simulator: Simulator, fault: str, reason: Reason
) -> None:
    simulator.faults.set("direct:oy-find-store", fault)
    started = time.monotonic()
    assert direct_reason(server) is reason
    assert time.monotonic() - started < 2.0  # never waits for a hang to end (it holds >= 15 s)
    assert simulator.calls()["direct:oy-find-store"] == 1


def test_the_loopback_transport_keeps_the_production_pool_per_retailer(
    server: SimulatorServer, simulator: Simulator
) -> None:
    """The simulator is one host; the sandbox still gives each retailer its own pool with production limits,
    so what one hanging retailer does to the others shows as it would in Lambda."""
    simulator.faults.set("direct:oy-find-store", "timeout")
    transport = direct(server)
    hanging = CATALOG[RouteKey.OY_FIND_STORE]
    fine = CATALOG[RouteKey.DTRYX_MOVIES]
    pool_size = PER_HOST_LIMITS.max_connections
    assert pool_size is not None
    calls = pool_size + 4
    with ThreadPoolExecutor(max_workers=calls) as callers:
        stuck = [
            callers.submit(transport.fetch, hanging, hanging.probe_params(NOW), timeout_ms=2_000)
            for _ in range(calls)
        ]
        give_up = time.monotonic() + 5
        while simulator.calls()["direct:oy-find-store"] < pool_size:
            assert time.monotonic() < give_up, "the hanging requests never reached the simulator"
            time.sleep(0.01)
        started = time.monotonic()
        with pytest.raises(RouteFailure) as answered:
            transport.fetch(fine, fine.probe_params(NOW), timeout_ms=2_000)
        assert answered.value.reason is Reason.SHAPE  # the stub payload came back: answered, not waiting
        assert time.monotonic() - started < 0.5
        assert simulator.calls()["direct:oy-find-store"] == PER_HOST_LIMITS.max_connections  # the rest wait
        for future in stuck:
            with pytest.raises(RouteFailure):
                future.result()


@pytest.mark.parametrize("status", [400, 404, 422])
def test_retailer_caller_statuses(server: SimulatorServer, simulator: Simulator, status: int) -> None:
    simulator.faults.set("direct:dtryx-movies", f"http-{status}")
    spec = CATALOG[RouteKey.DTRYX_MOVIES]
    with pytest.raises(UpstreamRejected) as caught:
        direct(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    assert caught.value.status == status


def test_a_fault_on_one_route_leaves_the_others_alone(client: httpx.Client, simulator: Simulator) -> None:
    simulator.faults.set("direct:cu-store", "http-503")
    assert client.post("/www.pocketcu.co.kr/api/store", json={}).status_code == 503
    healthy = client.post("/www.pocketcu.co.kr/api/search/rest/stock/main", json={"searchWord": "레쓰비"})
    assert healthy.status_code == 200
    assert healthy.json() == {"stub": "cu-stock", "input": {"searchWord": "레쓰비"}}


def test_raw_fault_answers(client: httpx.Client, simulator: Simulator) -> None:
    simulator.faults.set("direct:oy-find-store", "http-429")
    limited = client.post(OY_FIND_STORE_PATH, json={})
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "30")
    assert "x-relay-quota-reason" not in limited.headers

    simulator.faults.set("direct:oy-find-store", "html-200")
    html = client.post(OY_FIND_STORE_PATH, json={})
    assert html.status_code == 200
    assert html.text.lower().startswith("<!doctype html")

    simulator.faults.set("direct:oy-find-store", "oversize")
    big = client.post(OY_FIND_STORE_PATH, json={})
    assert len(big.content) == MAX_BODY_BYTES + 1
    assert json.loads(big.content)["padding"]

    simulator.faults.set("direct:oy-find-store", "refuse")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(OY_FIND_STORE_PATH, json={})


def test_query_parameters_reach_the_payload(client: httpx.Client) -> None:
    answer = client.get(
        "/new.7-elevenapp.co.kr/api/v1/open/product/search/stock", params={"itemCd": "8801056018979"}
    )
    assert answer.json() == {"stub": "seven-stock-meta", "input": {"itemCd": "8801056018979"}}


def test_unknown_retailer_paths_are_404_and_not_counted(client: httpx.Client, simulator: Simulator) -> None:
    assert client.get("/www.oliveyoung.co.kr/nope").status_code == 404
    assert client.get("/").status_code == 404
    assert sum(simulator.calls().values()) == 0


_CU_PRIME_PATH = "/www.pocketcu.co.kr/api/search/display/stock"


def _hang_in(
    simulator: Simulator, post: Callable[[], object]
) -> tuple[threading.Thread, list[BaseException]]:
    """Starts `post` (a `cu-prime` request, faulted to hang) on a thread and returns once the request hangs
    inside the simulator (ending it earlier would only refuse the connection, which says nothing about
    releasing a hang), with the list that collects the caller's error."""
    simulator.faults.set("direct:cu-prime", "timeout")
    errors: list[BaseException] = []

    def call() -> None:
        try:
            post()
        except httpx.HTTPError as error:
            errors.append(error)

    caller = threading.Thread(target=call)
    caller.start()
    give_up = time.monotonic() + 5
    while simulator.max_in_flight() < 1 and time.monotonic() < give_up:
        time.sleep(0.01)
    assert simulator.max_in_flight() == 1, "the request never reached the simulator"
    assert caller.is_alive(), "the request did not hang"
    return caller, errors


def test_a_hang_is_released_when_the_server_closes() -> None:
    simulator = stub_simulator()  # its own: a closed server releases its simulator for good
    server = SimulatorServer(simulator).start()
    caller, errors = _hang_in(
        simulator, lambda: httpx.post(f"{server.base_url}{_CU_PRIME_PATH}", json={}, timeout=10)
    )
    started = time.monotonic()
    server.close()
    caller.join(timeout=3)
    assert not caller.is_alive()
    assert time.monotonic() - started < 2
    # The hang ends by dropping the connection unanswered: not a refused connect, not a client timeout.
    assert len(errors) == 1
    assert type(errors[0]) is httpx.RemoteProtocolError
    assert simulator.calls()["direct:cu-prime"] == 1


def test_a_reset_ends_the_hangs_and_forgets_faults_and_counts_and_the_server_goes_on(
    client: httpx.Client, simulator: Simulator
) -> None:
    path = _CU_PRIME_PATH
    caller, errors = _hang_in(simulator, lambda: client.post(path, json={}))

    started = time.monotonic()
    simulator.reset()

    assert time.monotonic() - started < 2  # the hang was ended, not waited out (5 s)
    caller.join(timeout=2)
    assert not caller.is_alive()
    assert type(errors[0]) is httpx.RemoteProtocolError  # dropped unanswered, as a hang ends
    assert simulator.max_in_flight() == 0
    assert set(simulator.calls().values()) == {0}
    assert client.post(path, json={}).status_code == 200  # no fault left, and a hang no longer ends at once
    simulator.faults.set("direct:cu-prime", "slow-300")
    slow_started = time.monotonic()
    assert client.post(path, json={}).status_code == 200
    assert time.monotonic() - slow_started >= 0.3


# --- counts, leaks, concurrency ------------------------------------------------------------------


def test_call_counts_are_flat_and_start_at_zero(simulator: Simulator) -> None:
    calls = simulator.calls()
    assert calls["leakedSecrets"] == 0
    assert {name for name in calls if name.startswith("direct:")} == {f"direct:{key}" for key in RouteKey}
    assert {name for name in calls if name.startswith("relay:")} == {f"relay:{key}" for key in RouteKey}
    assert {name for name in calls if name.startswith("relay-upstream:")} == {
        f"relay-upstream:{key}" for key in RouteKey
    }
    assert {name for name in calls if name.startswith("relay-health:")} == {
        f"relay-health:{group}" for group in RelayGroup
    }
    assert set(calls.values()) == {0}


def test_counts_by_kind_and_reset(client: httpx.Client, simulator: Simulator) -> None:
    client.post(OY_FIND_STORE_PATH, json={})
    client.post(OY_FIND_STORE_PATH, json={})
    auth = {"Authorization": "Bearer dtryx-token-3"}
    client.post("/relays/dtryx/v1/dtryx/timetable", json={"brandCode": "indieart"}, headers=auth)
    client.get("/relays/dtryx/v1/dtryx/health", headers=auth)
    client.get("/relays/convenience/v1/convenience/health")  # unauthorized: still counted at its front
    client.post("/relay-upstream/www.pocketcu.co.kr/api/search/display/stock", json={})

    calls = simulator.calls()
    assert calls["direct:oy-find-store"] == 2
    assert calls["relay:dtryx-timetable"] == 1
    assert calls["relay-health:dtryx"] == 1
    assert calls["relay-health:convenience"] == 1
    assert calls["relay-upstream:cu-prime"] == 1
    assert calls["direct:cu-prime"] == 0  # the relays' requests are not the Lambda's
    assert sum(calls.values()) == 6
    simulator.reset_calls()
    assert set(simulator.calls().values()) == {0}


@pytest.mark.parametrize(
    ("headers", "params", "body"),
    [
        ({"Authorization": "Bearer whatever"}, {}, {}),
        ({"CF-Access-Client-Id": "x"}, {}, {}),
        ({"cf-access-client-secret": "x"}, {}, {}),
        ({"X-Custom": "conv-token-2"}, {}, {}),
        ({}, {"q": "dtryx-token-3"}, {}),
        ({}, {}, {"note": "oy-access-secret"}),
        ({"Referer": "https://x.example/?t=oy-token-1"}, {}, {}),
    ],
)
def test_leaked_secrets_are_counted(
    client: httpx.Client,
    simulator: Simulator,
    headers: dict[str, str],
    params: dict[str, str],
    body: dict[str, str],
) -> None:
    client.post(OY_FIND_STORE_PATH, headers=headers, params=params, json=body)
    assert simulator.calls()["leakedSecrets"] == 1


def test_the_real_transports_leak_nothing(server: SimulatorServer, simulator: Simulator) -> None:
    simulator.faults.set("relay:oliveyoung", "bad-shape")
    for key in DIRECT_PROBED:  # failures are expected with stub payloads; only the requests matter here
        spec = CATALOG[key]
        with pytest.raises((RouteFailure, ApiError)):
            direct(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
        with pytest.raises(ApiError):
            relays(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    calls = simulator.calls()
    assert calls["leakedSecrets"] == 0
    assert all(calls[f"direct:{key}"] == 1 for key in DIRECT_PROBED)
    assert calls["direct:gs25-stock"] == 0
    assert all(calls[f"relay:{key}"] == 1 for key in DIRECT_PROBED)


def test_max_in_flight_is_measured_and_reset(server: SimulatorServer, simulator: Simulator) -> None:
    # Long enough that all five overlap even when a busy machine starts the threads slowly.
    simulator.faults.set("direct:cu-prime", "slow-1000")
    url = f"{server.base_url}/www.pocketcu.co.kr/api/search/display/stock"
    callers = [threading.Thread(target=lambda: httpx.post(url, json={}, timeout=5)) for _ in range(5)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert simulator.max_in_flight() == 5
    simulator.reset_max_in_flight()
    assert simulator.max_in_flight() == 0
    httpx.post(url, json={}, timeout=2)
    assert simulator.max_in_flight() == 1


def test_handle_is_callable_in_process(simulator: Simulator) -> None:
    answer = simulator.handle(SimRequest("POST", "/www.pocketcu.co.kr/api/store", {}, b'{"latVal":"37.5"}'))
    assert answer is not None
    assert (answer.status, json.loads(answer.body)) == (
        200,
        {"stub": "cu-store", "input": {"latVal": "37.5"}},
    )
    simulator.faults.set("direct:cu-store", "refuse")
    assert simulator.handle(SimRequest("POST", "/www.pocketcu.co.kr/api/store", {}, b"{}")) is None


# --- relay fronts and the relays behind them -------------------------------------------------------


OY_ACCESS = {"CF-Access-Client-Id": "oy-access-id", "CF-Access-Client-Secret": "oy-access-secret"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 403),  # Cloudflare Access at the front: no Access keys, no relay
        ({"Authorization": "Bearer oy-token-1"}, 403),
        ({**OY_ACCESS, "CF-Access-Client-Secret": "no", "Authorization": "Bearer oy-token-1"}, 403),
        (OY_ACCESS, 401),  # Access passed; the relay itself wants its token
        ({**OY_ACCESS, "Authorization": "Bearer wrong"}, 401),
        ({**OY_ACCESS, "Authorization": "Bearer oy-token-1"}, 200),
    ],
)
def test_access_at_the_front_and_the_token_at_the_relay(
    client: httpx.Client, simulator: Simulator, headers: dict[str, str], status: int
) -> None:
    answer = client.get("/relays/oliveyoung/health", headers=headers)
    assert answer.status_code == status
    if status == 401:
        assert answer.json() == {"error": "Unauthorized"}
    if status == 200:
        assert answer.json()["state"] == "ready"
        assert answer.headers["cache-control"] == "no-store"  # the relay's own answer, passed on
    assert simulator.calls()["relay-health:oliveyoung"] == 1


def test_the_relays_own_protocol_answers_pass_the_front(client: httpx.Client) -> None:
    auth = {"Authorization": "Bearer conv-token-2"}
    assert (
        client.post("/relays/convenience/v1/convenience/unknown-op", json={}, headers=auth).status_code == 404
    )
    assert client.get("/relays/convenience/v1/convenience/cu-store", headers=auth).status_code == 405
    assert (
        client.post("/relays/convenience/v1/convenience/cu-prime?x=1", json={}, headers=auth).status_code
        == 404
    )
    assert client.post("/relays/nope/v1/nope/x", json={}, headers=auth).status_code == 404  # no such front


GS25_STOCK_BODY = {"serviceCode": "01", "realTimeStockYn": "Y", "keyword": "콜라", "pageNumber": "1"}


@pytest.mark.parametrize(
    ("path", "body", "status", "answer"),
    [
        # what the Lambda used to send for gs25-stock: numbers and an empty store code
        (
            "convenience/v1/convenience/gs25-stock",
            {**GS25_STOCK_BODY, "pageNumber": 1},
            400,
            "Relay request failed",
        ),
        (
            "convenience/v1/convenience/gs25-stock",
            {**GS25_STOCK_BODY, "storeCode": ""},
            400,
            "Relay request failed",
        ),
        (
            "convenience/v1/convenience/seven-stock",
            {"smCd": "1", "stokMngQty": -1},
            400,
            "Relay request failed",
        ),
        ("convenience/v1/convenience/cu-prime", {"extra": 1}, 400, "Relay request failed"),
        (
            "dtryx/v1/dtryx/timetable",
            {"brandCode": "indieart", "cinemaCode": "000067"},
            400,
            "Relay request failed",
        ),
        ("dtryx/v1/dtryx/movies", {"brandCode": "indieart", "cinemaCode": 67}, 400, "Relay request failed"),
        ("oliveyoung/v1/oliveyoung/stock-goods-info-v3", {"goodsNo": 4}, 400, "Invalid payload"),
        ("oliveyoung/v1/oliveyoung/stock-goods-info-v3", b"{oops", 400, "Invalid JSON"),
        (
            "oliveyoung/v1/oliveyoung/stock-goods-info-v3",
            b'{"goodsNo":"' + b"a" * 16_384 + b'"}',
            413,
            "Body too large",
        ),
    ],
)
def test_the_relays_refuse_bodies_as_the_original_relays_do(
    client: httpx.Client, simulator: Simulator, path: str, body: object, status: int, answer: str
) -> None:
    group = RelayGroup(path.partition("/")[0])
    token = {"Authorization": f"Bearer {CREDENTIALS[group].token}"}
    access = CREDENTIALS[group]  # the front wants the Access pair where the group has one
    if access.access_client_id and access.access_client_secret:
        token |= {
            "CF-Access-Client-Id": access.access_client_id,
            "CF-Access-Client-Secret": access.access_client_secret,
        }
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = client.post(f"/relays/{path}", content=content, headers=token)
    assert (reply.status_code, reply.json()) == (status, {"error": answer})
    assert sum(simulator.calls().values()) == 1  # refused by the relay: no retailer call


@pytest.mark.parametrize(("api_key", "status"), [(None, 403), ("wrong-key", 403), ("gs25-api-key-4", 200)])
def test_simulated_gs25_stock_needs_the_gs25_api_key(api_key: str | None, status: int) -> None:
    # The relay has no GS25 session or key: it passes the caller's key to GS25 as `Api-Key`, and GS25's
    # refusal back (403); without any key it refuses by itself.
    seen: list[Mapping[str, Any]] = []

    def recorded(key: RouteKey, request_input: Mapping[str, Any]) -> object:
        seen.append(request_input)
        return realistic_payload(key, request_input)

    spec = CATALOG[RouteKey.GS25_STOCK]
    probe = dict(spec.relay_body(spec.probe_params(NOW)))
    body = probe if api_key is None else {**probe, "apiKey": api_key}
    quiet = RelayLog(io.StringIO())
    with start_upstreams(
        Simulator(CREDENTIALS, realistic=recorded), CREDENTIALS, clock=lambda: NOW, log=quiet
    ) as up:
        reply = httpx.post(
            f"{up.relay_url(RelayGroup.CONVENIENCE)}/v1/convenience/gs25-stock",
            json=body,
            headers={"Authorization": "Bearer conv-token-2"},
        )
        calls = up.simulator.calls()
    assert reply.status_code == status
    assert calls["relay-upstream:gs25-stock"] == (0 if api_key is None else 1)
    assert calls["leakedSecrets"] == 0  # the GS25 key belongs at GS25
    if status == 403:
        assert reply.json() == {"error": "Relay request failed"}
    else:
        assert seen
        assert all("apiKey" not in request_input for request_input in seen)  # a header, never a parameter


def test_a_gs25_refusal_of_the_relays_session_is_a_503_for_the_lambda(server: SimulatorServer) -> None:
    wrong_key = {RelayGroup.CONVENIENCE: RelayCredentials("conv-token-2", api_key="expired-key")}
    spec = CATALOG[RouteKey.GS25_STOCK]
    with pytest.raises(ApiError) as caught:
        relays(server, wrong_key).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS * 10)
    assert (caught.value.status, caught.value.code) == (503, "UPSTREAM_ROUTE_UNAVAILABLE")


def test_relay_lookup_through_the_relay_transport() -> None:
    seen: list[Mapping[str, Any]] = []

    def relay_payload(key: RouteKey, request_input: Mapping[str, Any]) -> object:
        seen.append(request_input)
        return {
            "RetCode": "success",
            "RetMsg": "",
            "RecordCount": 1,
            "Recordset": [{"MovieCd": "1", "MovieNm": "파묘"}],
        }

    sim = Simulator(CREDENTIALS, realistic=relay_payload)
    with start_upstreams(sim, CREDENTIALS, clock=lambda: NOW, log=RelayLog(io.StringIO())) as local:
        spec = CATALOG[RouteKey.DTRYX_MOVIES]
        relays(local.server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS * 10)
    (received,) = seen  # what Dtryx received from the relay: its query
    assert (received["BrandCd"], received["CinemaCd"]) == ("indieart", "000067")
    assert (sim.calls()["relay:dtryx-movies"], sim.calls()["relay-upstream:dtryx-movies"]) == (1, 1)
    assert sim.calls()["direct:dtryx-movies"] == 0


@pytest.mark.parametrize(
    ("fault", "status", "code", "retry_after"),
    [
        ("http-429", 429, "RELAY_QUOTA_EXCEEDED", 30),
        ("http-401", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("http-404", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("http-500", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("http-503", 503, "UPSTREAM_ROUTE_UNAVAILABLE", None),
        ("timeout", 504, "UPSTREAM_TIMEOUT", None),
        ("slow-1500", 504, "UPSTREAM_TIMEOUT", None),
        ("refuse", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("html-200", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("invalid-json", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("bad-shape", 502, "UPSTREAM_BAD_RESPONSE", None),
        ("oversize", 502, "UPSTREAM_BAD_RESPONSE", None),
    ],
)
def test_relay_faults_reach_the_relay_transport(
    server: SimulatorServer, simulator: Simulator, fault: str, status: int, code: str, retry_after: int | None
) -> None:
    simulator.faults.set("relay:convenience", fault)
    spec = CATALOG[RouteKey.SEVEN_STOCK]
    with pytest.raises(ApiError) as caught:
        relays(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS)
    assert (caught.value.status, caught.value.code, caught.value.retry_after) == (status, code, retry_after)
    assert simulator.calls()["relay:seven-stock"] == 1


def test_relay_quota_headers(client: httpx.Client, simulator: Simulator) -> None:
    simulator.faults.set("relay:dtryx", "http-429")
    answer = client.post(
        "/relays/dtryx/v1/dtryx/movies", json={}, headers={"Authorization": "Bearer dtryx-token-3"}
    )
    assert (answer.status_code, answer.headers["retry-after"], answer.headers["x-relay-quota-reason"]) == (
        429,
        "30",
        "minute",
    )


@pytest.mark.parametrize("group", list(RelayGroup))
def test_relays_are_healthy_by_default(
    server: SimulatorServer, simulator: Simulator, group: RelayGroup
) -> None:
    check = relays(server).check_health(group, timeout_ms=DEADLINE_MS, now=NOW)
    assert check == RelayCheck(group, healthy=True, checked_at=NOW, reason=Reason.OK)
    assert simulator.calls()[f"relay-health:{group}"] == 1
    assert sum(simulator.calls().values()) == 1  # a health check is not a lookup


@pytest.mark.parametrize(
    ("fault", "reason"),
    {**FAULT_REASONS, "http-404": Reason.HTTP_ERROR, "bad-shape": Reason.UNAVAILABLE}.items(),
)
def test_relay_faults_apply_to_health_checks(
    server: SimulatorServer, simulator: Simulator, fault: str, reason: Reason
) -> None:
    simulator.faults.set("relay:oliveyoung", fault)
    check = relays(server).check_health(RelayGroup.OLIVEYOUNG, timeout_ms=DEADLINE_MS, now=NOW)
    assert check == RelayCheck(RelayGroup.OLIVEYOUNG, healthy=False, checked_at=NOW, reason=reason)


def test_health_with_a_wrong_token_is_401(server: SimulatorServer) -> None:
    wrong = {RelayGroup.DTRYX: RelayCredentials("not-the-token")}
    check = relays(server, wrong).check_health(RelayGroup.DTRYX, timeout_ms=DEADLINE_MS, now=NOW)
    assert check.reason is Reason.HTTP_401


# --- real payloads ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", DIRECT_PROBED)
def test_real_payloads_pass_the_real_specs_direct_and_via_relay(
    real: SimulatedUpstreams, key: RouteKey
) -> None:
    sim, local = real.simulator, real.server
    spec = CATALOG[key]
    direct(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    relays(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    sim.faults.set(f"direct:{key}", "bad-shape")
    with pytest.raises(RouteFailure) as caught:
        direct(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    assert caught.value.reason is Reason.SHAPE
    assert sim.calls()[f"direct:{key}"] == 2
    assert (sim.calls()[f"relay:{key}"], sim.calls()[f"relay-upstream:{key}"]) == (1, 1)
    assert sim.calls()["leakedSecrets"] == 0


def test_the_simulated_cgv_answers_only_its_keys_signature_like_a_rotated_key_would(
    real: SimulatedUpstreams,
) -> None:
    sim, local = real.simulator, real.server
    spec = CATALOG[RouteKey.CGV_THEATERS]
    direct(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    with pytest.raises(RouteFailure) as caught:
        direct(local, {cgv.SIGNING_KEY: "a-key-cgv-no-longer-uses"}).fetch(
            spec, spec.probe_params(NOW), timeout_ms=2_000
        )
    assert caught.value.reason is Reason.HTTP_403
    assert sim.calls()["direct:cgv-theaters"] == 2
    assert sim.calls()["leakedSecrets"] == 0


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no signature
        {"User-Agent": "python-httpx/0.28"},  # signed, but no browser
        {"X-TIMESTAMP": "1750000000", "X-SIGNATURE": "AAAA"},
    ],
)
def test_the_simulated_cgv_refuses_unsigned_or_non_browser_calls(
    real: SimulatedUpstreams, headers: dict[str, str]
) -> None:
    spec = CATALOG[RouteKey.CGV_THEATERS]
    sent = spec.request_to_send(spec.probe_params(NOW), keys=SIGNING_KEYS.get, now=NOW)
    signed = {**sent.headers, **headers} if "User-Agent" in headers else {**spec.headers, **headers}
    with new_http_client(loopback_transport(real.server.base_url)) as client:
        answer = client.get(sent.url, headers=signed)
    assert answer.status_code == 403
    assert answer.headers["content-type"].startswith("text/html")


def test_a_signing_key_sent_to_a_retailer_is_a_leak(real: SimulatedUpstreams) -> None:
    with new_http_client(loopback_transport(real.server.base_url)) as client:
        client.get(
            "https://api.cgv.co.kr/cnm/atkt/searchRegnList", headers={"X-Key": SIGNING_KEYS[cgv.SIGNING_KEY]}
        )
    assert real.simulator.calls()["leakedSecrets"] == 1


def test_cgv_calls_through_the_dtryx_relays_url_count_as_cgvs(real: SimulatedUpstreams) -> None:
    endpoint = RelayEndpoint.parse(
        RelayGroup.CGV, real.server.relay_url(RelayGroup.DTRYX), CREDENTIALS[RelayGroup.CGV]
    )
    transport = RelayTransport(
        SHARED_RELAY_CLIENT, {RelayGroup.CGV: endpoint}, clock=lambda: NOW, events=RecordingRelayEvents()
    )
    spec = CATALOG[RouteKey.CGV_MOVIES]
    transport.fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    assert transport.check_health(RelayGroup.CGV, timeout_ms=2_000, now=NOW).healthy
    calls = real.simulator.calls()
    assert (calls["relay:cgv-movies"], calls["relay-upstream:cgv-movies"], calls["relay-health:cgv"]) == (
        1,
        1,
        1,
    )
    assert calls["relay-health:dtryx"] == 0


def test_gs25_stock_is_served_by_the_relay_and_never_direct(real: SimulatedUpstreams) -> None:
    sim, local = real.simulator, real.server
    spec = CATALOG[RouteKey.GS25_STOCK]
    relays(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    with pytest.raises(RouteFailure) as caught:
        direct(local).fetch(spec, spec.probe_params(NOW), timeout_ms=2_000)
    assert caught.value.reason is Reason.PINNED_RELAY
    assert (sim.calls()["relay:gs25-stock"], sim.calls()["direct:gs25-stock"]) == (1, 0)


# --- the retailers as the relays see them; exact answers; restarts -------------------------------------


def test_relay_upstream_faults_are_the_retailer_as_the_relay_sees_it(
    server: SimulatorServer, simulator: Simulator
) -> None:
    simulator.faults.set("relay-upstream:dtryx-movies", "http-403")
    spec = CATALOG[RouteKey.DTRYX_MOVIES]
    assert direct_reason(server, RouteKey.DTRYX_MOVIES) is Reason.SHAPE  # the Lambda still reaches it
    with pytest.raises(ApiError) as caught:
        relays(server).fetch(spec, spec.probe_params(NOW), timeout_ms=DEADLINE_MS * 10)
    assert caught.value.status == 502  # the relay's answer to the retailer's 403
    calls = simulator.calls()
    assert (
        calls["direct:dtryx-movies"],
        calls["relay:dtryx-movies"],
        calls["relay-upstream:dtryx-movies"],
    ) == (
        1,
        1,
        1,
    )


@pytest.mark.parametrize("target", ["direct:cu-prime", "relay-upstream:cu-prime", "relay:convenience"])
def test_a_respond_fault_answers_exactly_that(
    client: httpx.Client, simulator: Simulator, target: str
) -> None:
    simulator.faults.set(
        target, parse_fault("respond", status=299, body="말 그대로", content_type="text/plain")
    )
    path = {
        "direct": "/www.pocketcu.co.kr/api/search/display/stock",
        "relay-upstream": "/relay-upstream/www.pocketcu.co.kr/api/search/display/stock",
        "relay": "/relays/convenience/v1/convenience/cu-prime",
    }[target.partition(":")[0]]
    answer = client.post(path, json={})
    assert (answer.status_code, answer.text, answer.headers["content-type"]) == (
        299,
        "말 그대로",
        "text/plain",
    )


@pytest.mark.parametrize(
    ("fault", "status", "body", "content_type", "message"),
    [
        ("respond", None, "x", None, "status from 200 to 599"),
        ("respond", 600, None, None, "status from 200 to 599"),
        ("respond", 200, None, "text/\x01", "printable"),
        ("http-500", 200, None, None, "only with the respond fault"),
    ],
)
def test_respond_needs_a_status_and_nothing_else_takes_one(
    fault: str, status: int | None, body: str | None, content_type: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_fault(fault, status=status, body=body, content_type=content_type)


def test_a_restarted_relay_keeps_its_port_and_its_quota_ledger() -> None:
    quiet = RelayLog(io.StringIO())
    with start_upstreams(Simulator(CREDENTIALS), CREDENTIALS, clock=lambda: NOW, log=quiet) as upstreams:
        front = upstreams.relay_url(RelayGroup.DTRYX)
        auth = {"Authorization": "Bearer dtryx-token-3"}
        spec = CATALOG[RouteKey.DTRYX_MOVIES]
        body = dict(spec.relay_body(spec.probe_params(NOW)))
        assert httpx.post(f"{front}/v1/dtryx/movies", json=body, headers=auth).status_code == 200
        before = upstreams.relays.urls()[RelayGroup.DTRYX]
        assert upstreams.relays.restart(RelayGroup.DTRYX) == before
        health = httpx.get(f"{front}/v1/dtryx/health", headers=auth).json()
    assert health["quota"]["dailyRemaining"] == POLICIES[RelayGroup.DTRYX].quota.per_day - 1
